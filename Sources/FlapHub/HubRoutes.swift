import FlapCore
import FlapHubInput
import FlapInput
import FlapMessages
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat

extension Hub {
    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: JSONErrors(logger: logger))
        let api = router.group("api/v1")
        api.get("users/me") { request, _ in try self.reply(200, try await self.caller(request)) }

        api.post("messages") { request, _ in try await self.send(request) }
        api.get("messages/inbox") { request, _ in
            let me = try await self.caller(request)
            let t = self.now()
            var messages = try await self.store.inbox(of: me.id, now: t)
            try await self.delivered(try await self.store.markDelivered(messages.map(\.id), now: t))
            for i in messages.indices { messages[i].deliveredAt = messages[i].deliveredAt ?? t }
            return try self.reply(200, APIInbox(messages: try await self.apiMessages(messages)))
        }
        api.get("messages/from/:sender") { request, context in
            let me = try await self.caller(request)
            let name = try context.parameters.require("sender")
            guard let sender = try await self.store.user(name) else { throw HubError(404, "no user '\(name)'") }
            guard let m = try await self.store.latest(from: sender.id, to: me.id, now: self.now()) else {
                throw HubError(404, "no live message from '\(name)'")
            }
            try await self.delivered(try await self.store.markDelivered([m.id], now: self.now()))
            return try self.reply(200, try await self.store.api(m))
        }
        api.get("messages/:id") { request, context in
            let me = try await self.caller(request)
            var m = try await self.message(try context.parameters.require("id"), readableBy: me)
            if m.recipientID == me.id, m.deliveredAt == nil {
                let t = self.now()
                try await self.delivered(try await self.store.markDelivered([m.id], now: t))
                m.deliveredAt = t
            }
            return try self.reply(200, try await self.store.api(m))
        }
        api.delete("messages/:id") { request, context in
            let me = try await self.caller(request)
            let m = try await self.message(try context.parameters.require("id"), readableBy: me)
            try await self.store.delete(message: m.id)
            try await self.publish(.frame(user: m.recipientID, text: WireFrame.deleted(messageID: m.id).text))
            return Response(status: .noContent)
        }
        friendRoutes(api)
        senderPageRoutes(router, api: api)
        vestaboardRoutes(router)
        return router
    }

    /// `POST /api/v1/messages`: validates, stores one copy per recipient, pushes `message.new`.
    /// On SQLite the recipients are read in the send's transaction (`HubStore.send(reading:)`);
    /// on PostgreSQL each is read first unless known (`sendToKnown`), then the send is stored.
    func send(_ request: Request) async throws -> Response {
        let me = try await caller(request)
        let t = now()
        let sending = try SendRequest.read(try await json(request), now: t, ttl: limits.messageTTL)
        let sent: Sent
        if let postgres = store.db as? PostgresDatabase {
            if let answer = try await sendToKnown(sending, by: me, at: t, on: postgres) { return answer }
            var recipients: [HubStore.Recipient?] = []
            for name in sending.recipients { recipients.append(try await store.recipient(name, of: me.id)) }
            sent = self.sent(sending, by: me, at: t, to: recipients)
            if !sent.stored.isEmpty { try await storeAndPush(sent.stored, by: me, at: t) }
        } else {
            sent = try await store.send(reading: sending.recipients, by: me.id, now: t, perHour: limits.messagesPerHour) { recipients in
                let sent = self.sent(sending, by: me, at: t, to: recipients)
                return (sent, sent.stored)
            }
            for event in newMessageEvents(sent.stored, by: me) { await relayed(event) }
        }
        guard !sent.stored.isEmpty else {
            return HubReply.response(.forbidden, HubReply.Sent(error: "no recipient could take the message", results: sent.results))
        }
        return HubReply.response(.created, HubReply.Sent(results: sent.results))
    }

    /// What a send answers for each recipient, and the messages it stores.
    struct Sent: Sendable {
        var results: [HubReply.Sent.Outcome] = []
        var stored: [HubStore.Message] = []
    }

    /// A send to its recipients as read (nil: no such user): a message for each that takes it.
    func sent(_ sending: SendRequest, by me: HubStore.User, at t: Double, to recipients: [HubStore.Recipient?]) -> Sent {
        var sent = Sent()
        for (name, to) in zip(sending.recipients, recipients) {
            guard let to else { sent.results.append(.refused(name, "no such user")); continue }
            if to.blocks { sent.results.append(.refused(name, "blocked")); continue }
            guard to.friends else { sent.results.append(.refused(name, "not a friend")); continue }
            let m = message(from: me, to: to.user.id, sending, at: t, transition: to.transition)
            sent.stored.append(m)
            sent.results.append(.init(recipient: name, recipientID: to.user.id, status: .sent, messageID: m.id))
        }
        return sent
    }

    /// On PostgreSQL, a send whose every recipient this instance knows from an earlier send
    /// (`KnownRecipients`): checked and stored in one round trip (`HubStore.sendKnown`). Nil
    /// when one is not known, or no longer as known — then those are forgotten, nothing was
    /// stored, and the send goes the long way (`send`), which reads each recipient again.
    func sendToKnown(_ sending: SendRequest, by me: HubStore.User, at t: Double, on postgres: PostgresDatabase) async throws -> Response? {
        let known = sending.recipients.compactMap { store.knownRecipients.value($0.lowercased()) }
        guard known.count == sending.recipients.count else { return nil }
        let messages = known.map { message(from: me, to: $0.user.id, sending, at: t, transition: $0.transition) }
        let events = newMessageEvents(messages, by: me)
        if let statuses = try await store.sendKnown(messages, transitions: known.map(\.transition), by: me.id, now: t,
                                                     perHour: limits.messagesPerHour, notifying: notices(events), on: postgres) {
            for (name, status) in zip(sending.recipients, statuses) where status != 0 { store.knownRecipients.forget(name.lowercased()) }
            return nil
        }
        for event in events { await relayed(event) }
        return HubReply.response(.created, HubReply.Sent(results: zip(sending.recipients, messages).map { name, m in
            .init(recipient: name, recipientID: m.recipientID, status: .sent, messageID: m.id)
        }))
    }

    /// A message of a send to one recipient.
    func message(from sender: HubStore.User, to recipient: String, _ sending: SendRequest, at t: Double,
                 transition: HubStore.BoardTransition?) -> HubStore.Message {
        message(from: sender, to: recipient, content: sending.content, type: sending.type, at: t, unlockAt: sending.unlockAt,
                options: sending.options, transition: transition)
    }

    /// A new message of `sender` to `recipient`, with the recipient board's `transition` (as its
    /// owner set it through the Cloud API) unless `options` bring their own.
    func message(from sender: HubStore.User, to recipient: String, content: String, type: InboxMessage.ContentType, at t: Double,
                 unlockAt: Double?, options: MessageOptions, transition: HubStore.BoardTransition?) -> HubStore.Message {
        var options = options
        if options.transition == nil, let transition {
            options.transition = TransitionFields(transition: transition.transition, speed: transition.speed)
        }
        return HubStore.Message(id: HubStore.newMessageID(at: t), senderID: sender.id, recipientID: recipient, content: content,
                                contentType: type, createdAt: t, unlockAt: unlockAt, expiresAt: t + limits.messageTTL, options: options)
    }

    /// Stores a send (its hourly limit counted in the same transaction: `HubStore.send`), then
    /// pushes `message.new` to each recipient: the other instances are told by the send itself
    /// (its notifications go with its commit), this one's connections once it is stored.
    func storeAndPush(_ messages: [HubStore.Message], by sender: HubStore.User, at t: Double) async throws {
        let events = newMessageEvents(messages, by: sender)
        try await store.send(messages, by: sender.id, now: t, perHour: limits.messagesPerHour, notifying: notices(events))
        for event in events { await relayed(event) }
    }

    /// Each new message's event, its `message.new` frame written once.
    func newMessageEvents(_ messages: [HubStore.Message], by sender: HubStore.User) -> [RelayEvent] {
        messages.map { RelayEvent.message(id: $0.id, recipient: $0.recipientID, frame: WireFrame.new(HubStore.api($0, sender: sender)).text) }
    }

    /// What a send tells the other instances as it commits (on PostgreSQL).
    func notices(_ events: [RelayEvent]) -> (channel: String, payloads: [String])? {
        relay.map { relay in (PostgresRelay.channel, events.map(relay.payload)) }
    }

    func apiMessages(_ messages: [HubStore.Message]) async throws -> [APIMessage] {
        var all: [APIMessage] = []
        for m in messages { all.append(try await store.api(m)) }
        return all
    }

    /// Tells senders their messages reached a recipient's device.
    func delivered(_ messages: [HubStore.Message]) async throws {
        try await publish(messages.map { .frame(user: $0.senderID, text: WireFrame.delivered(messageID: $0.id, recipientID: $0.recipientID).text) })
    }

    /// The user of the request's bearer token, or 401.
    func caller(_ request: Request) async throws -> HubStore.User {
        guard let token = Self.bearer(request), let user = try await store.user(token: token, now: now()) else {
            throw HubError(401, "missing or unknown bearer token")
        }
        return user
    }

    func message(_ id: String, readableBy me: HubStore.User) async throws -> HubStore.Message {
        guard let m = try await store.message(id, now: now()), m.senderID == me.id || m.recipientID == me.id else {
            throw HubError(404, "no message \(id)")
        }
        return m
    }

    /// The request body as a JSON object (413 above `maxBody`, 400 when it is not one).
    func json(_ request: Request) async throws -> [String: Any] {
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: maxBody) } catch {
            throw HubError(413, "body is larger than \(maxBody) bytes")
        }
        return try SendRequest.object(Array(buffer: body))
    }

    func reply(_ status: Int, _ value: some Encodable) throws -> Response {
        HubReply.response(.init(code: status), value)
    }
}

/// Every error becomes a JSON body `{"error": …}` with a 4xx status: the hub's own errors
/// with theirs, Hummingbird's (404, 405) with theirs; anything else is logged and answered 500.
struct JSONErrors: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let e as HubError {
            var headers: HTTPFields = [:]
            if let r = e.retryAfter { headers[.retryAfter] = "\(r)" }
            return HubReply.failure(.init(code: e.status), e.description, headers: headers)
        } catch let e as DatabaseUnavailable {
            logger.warning("\(e)", metadata: ["path": "\(request.uri.path)"])
            return HubReply.failure(.serviceUnavailable, "the database is unavailable; try again", headers: [.retryAfter: "1"])
        } catch let e as SQLFailure where e.sqlState?.hasPrefix("22") == true {
            return HubReply.failure(.badRequest, "a value the database cannot store (SQLSTATE \(e.sqlState ?? "22"))")
        } catch let e as HTTPError {
            return HubReply.failure(e.status, e.body ?? e.status.reasonPhrase)
        } catch {
            logger.error("request failed: \(error)", metadata: ["path": "\(request.uri.path)"])
            return HubReply.failure(.internalServerError, "internal error")
        }
    }
}
