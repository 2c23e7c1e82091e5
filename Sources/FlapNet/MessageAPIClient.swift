import AsyncHTTPClient
import FlapClock
import FlapCore
import FlapDoor
import FlapInput
import FlapMessages
import FlapWiring
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import ServiceLifecycle
import Synchronization
import NIOSSL
@_spi(WSInternal) import WSCore

/// Subscribes a board to the message API: authenticates over the WebSocket, catches up through
/// the inbox on every (re)connect, hands on each new and deleted message, reports messages
/// displayed until the server confirms them, pings and takes a silent server for dead, and
/// reconnects with backoff forever. A frame it cannot read is logged with what was wrong and
/// skipped; it never stops the client.
public final class MessageAPIClient: Service, Sendable {
    /// What the board is told.
    public enum Event: Sendable, Equatable {
        /// The inbox after a (re)connect: the latest message of each sender, as the server has it.
        case caughtUp([InboxMessage])
        case new(InboxMessage)
        case deleted(messageID: String)
    }

    /// The connection as status shows it.
    public struct Status: Sendable, Equatable {
        public var connected = false
        /// Connections that authenticated.
        public var connections = 0
        /// Frames skipped because they could not be read.
        public var skippedFrames = 0
        public var lastProblem: String?
    }

    private let config: MessageAPIConfig
    private let logger: Logger
    private let onEvent: @Sendable (Event) async -> Void
    /// Messages displayed and not yet reported; the connection's reporter writes them, rung by
    /// `reportsWaiting`.
    private let unsent = Mutex<[String]>([])
    private let shows = Mutex<[[Int]]?>(nil)
    private let reportsWaiting = Doorbell()
    private let lastHeard = Mutex<ContinuousClock.Instant>(.now)
    private let state = Mutex(Status())
    private let random: @Sendable () -> Double
    /// How this board shows senders, told to the hub after each authentication (for senders' previews).
    private let face: BoardFace?

    public init(config: MessageAPIConfig, logger: Logger, face: BoardFace? = nil,
                random: @escaping @Sendable () -> Double = { .random(in: 0..<1) },
                onEvent: @escaping @Sendable (Event) async -> Void) {
        self.config = config
        self.face = face
        self.logger = logger
        self.onEvent = onEvent
        self.random = random
    }

    public var status: Status { state.withLock { $0 } }

    /// Reports a message displayed (`message.displayed`): now when connected, else after the
    /// next connect. (The connection's own reporter writes it; one the server has not confirmed
    /// taking up — `ReportLedger` — when its connection ends is written again on the next.)
    public func reportDisplayed(_ id: String) {
        unsent.withLock { $0.append(id) }
        reportsWaiting.ring()
    }

    /// Reports what the board shows (`board.shows`, read back by the hub's Cloud API): the
    /// latest only, written when it changed and at every connect.
    public func reportShows(_ layout: [[Int]]) {
        shows.withLock { $0 = layout }
        reportsWaiting.ring()
    }

    /// Writes the reports of messages displayed as they come, each batch followed by a ping whose
    /// pong confirms it (`ledger`), and what the board shows when it changed, until cancelled or
    /// the connection fails; a report not written is kept for the next connection.
    private func report(on outbound: WebSocketOutboundWriter, ledger: ReportLedger) async {
        var written: [[Int]]?
        while !Task.isCancelled {
            let ids = unsent.withLock { ids in defer { ids = [] }; return ids }
            for (i, id) in ids.enumerated() {
                do { try await outbound.write(.text(OutgoingFrame.displayed(id))) } catch {
                    giveBack(ids[i...])
                    return
                }
                ledger.wrote(id)
            }
            if !ids.isEmpty {
                ledger.pinging()
                do { try await outbound.write(.text(OutgoingFrame.ping)) } catch { return }
            }
            if let layout = shows.withLock({ $0 }), layout != written {
                do { try await outbound.write(.text(OutgoingFrame.shows(layout))) } catch { return }
                written = layout
            }
            await reportsWaiting.wait(seconds: nil)
        }
    }

    /// Puts reports back at the head of those waiting, for the next connection to write.
    private func giveBack(_ ids: some Collection<String>) {
        guard !ids.isEmpty else { return }
        unsent.withLock { waiting in waiting.insert(contentsOf: ids.filter { !waiting.contains($0) }, at: 0) }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var backoff = Backoff(random: self.random)
            let good = Mutex(false)
            while !Task.isCancelled {
                var stopping = false
                do {
                    let close = try await self.connect { good.withLock { $0 = true } }
                    stopping = close?.closeCode == .goingAway
                    self.problem(Self.describe(close, maxFrameBytes: self.config.maxFrameBytes))
                } catch is CancellationError {
                    return
                } catch {
                    self.problem("\(error)")
                }
                if good.withLock({ g in defer { g = false }; return g }) { backoff.reset() }
                let delay = stopping ? backoff.afterServerStop() : backoff.next()
                let why = stopping ? " (the server stopped: boards come back spread over \(Int(backoff.spread)) s)" : ""
                self.logger.info("message API: reconnecting in \(String(format: "%.1f", delay)) s\(why)")
                try? await Task.sleep(for: .seconds(delay))
            }
        }
    }

    private func problem(_ text: String) {
        state.withLock { $0.connected = false; $0.lastProblem = text }
        logger.warning("message API: \(text)")
    }

    static func tooLarge(_ maxFrameBytes: Int) -> String { "a frame over \(maxFrameBytes / 1024) KiB ended the connection" }

    /// Why a connection that ended without an error ended.
    static func describe(_ close: WebSocketCloseFrame?, maxFrameBytes: Int) -> String {
        switch close?.closeCode {
        case .messageTooLarge?: tooLarge(maxFrameBytes)
        case let code?: "the connection closed (\(code)\(close?.reason.map { ": \($0)" } ?? ""))"
        case nil: "the connection closed"
        }
    }

    /// One connection, from the upgrade to its end. The upgrade (name, TCP, TLS and the server's
    /// 101) must be done within 3 pings' time, or the attempt is ended (its channel closed) and
    /// reported late; a stop before then ends it the same way. (The name lookup and TCP connect
    /// are bounded by NIO's connect timeout, 3 pings and at most 10 s: a stop while the system's
    /// resolver hangs waits that long.)
    private func connect(authenticated: @escaping @Sendable () -> Void) async throws -> WebSocketCloseFrame? {
        let limit = 3 * config.pingSeconds
        let attempt = WebSocketAttempt()
        do {
            return try await withAlarm(after: .seconds(limit), { attempt.end(.late) }) {
                try await withTaskCancellationHandler {
                    try await session(attempt, limit: limit, authenticated: authenticated)
                } onCancel: {
                    attempt.end(.stopped)
                }
            }
        } catch {
            switch attempt.ending {
            case .late: throw ClientError.refused("no answer to the WebSocket upgrade within \(String(format: "%g", limit)) s")
            case .stopped: throw CancellationError()
            case nil:
                // WSCore's error for a message over the limit is internal to it; it names its code.
                if String(describing: error).contains("messageTooLarge") {
                    throw ClientError.refused(Self.tooLarge(config.maxFrameBytes))
                }
                throw error
            }
        }
    }

    /// A connection made by `attempt`, its connect bounded by `limit` seconds (at most 10).
    private func session(_ attempt: WebSocketAttempt, limit: Double, authenticated: @escaping @Sendable () -> Void) async throws -> WebSocketCloseFrame? {
        let urls = config.endpoints
        return try await attempt.run(
            url: urls.webSocket, tls: urls.webSocket.hasPrefix("wss:") ? .makeClientConfiguration() : nil,
            maxFrameBytes: config.maxFrameBytes, connectTimeout: .milliseconds(Int64(min(limit, 10) * 1000)), logger: logger
        ) { inbound, outbound, _ in
            try await outbound.write(.text(OutgoingFrame.authenticate(token: self.config.token)))
            var frames = inbound.makeAsyncIterator()
            // A server that upgrades and then says nothing is given 3 pings' time, then left. The
            // answer and the deadline are one decision: an answer taken as the deadline closes the
            // connection would leave this client on a connection that ends under it.
            let first = try await withDeadline(after: .seconds(3 * self.config.pingSeconds), late: {
                try? await outbound.close(.goingAway, reason: "no authentication")
            }) { try await frames.nextMessage(maxSize: self.config.maxFrameBytes) }
            guard let first = first ?? nil else {
                throw ClientError.refused("the connection closed before authentication (none came within \(3 * self.config.pingSeconds) s)")
            }
            guard case .text(let text) = first, case .success(.authenticated(let asked)) = APIFrame.decode(text) else {
                throw ClientError.refused("authentication refused: \(APIFrame.preview("\(first)"))")
            }
            let pingSeconds = Self.pingSeconds(own: self.config.pingSeconds, asked: asked)
            authenticated()
            self.heard()
            if let face = self.face { try await outbound.write(.text(OutgoingFrame.face(face))) }
            let inbox = try await self.fetchInbox(urls.inbox)
            self.state.withLock { $0.connected = true; $0.connections += 1; $0.lastProblem = nil }
            self.logger.notice("message API connected", metadata: [
                "url": "\(urls.webSocket)", "inbox": "\(inbox.count)", "ping_seconds": "\(String(format: "%g", pingSeconds))"])
            await self.onEvent(.caughtUp(inbox))
            // Reports written on this connection and not confirmed by its end go to the next.
            let ledger = ReportLedger()
            defer { self.giveBack(ledger.unconfirmed) }
            let silence = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    guard let why = try? await self.keepAlive(outbound, every: pingSeconds, ledger: ledger) else { return nil }
                    try? await outbound.close(.goingAway, reason: "silent")
                    return why
                }
                group.addTask { await self.report(on: outbound, ledger: ledger); return nil }
                while let message = try await frames.nextMessage(maxSize: self.config.maxFrameBytes) {
                    self.heard()
                    await self.take(message, ledger: ledger)
                }
                group.cancelAll()
                var why: String?
                for try await reason in group { why = why ?? reason }
                return why
            }
            if let why = silence { throw ClientError.silent(why) }
        }
    }

    /// How often a connection pings: the longer of the board's `ping_seconds` and what the
    /// server asked in `authenticated` (at most 300 s, the longest a board may set).
    static func pingSeconds(own: Double, asked: Int?) -> Double {
        max(own, Double(min(asked ?? 0, 300)))
    }

    /// Sends `ping` every `seconds`; returns why once the server has been silent for three
    /// pings' time and through three of this client's own wake-ups: a process starved past its
    /// deadlines (frames waiting unread in its socket) does not take a live server for dead.
    private func keepAlive(_ outbound: WebSocketOutboundWriter, every seconds: Double, ledger: ReportLedger) async throws -> String {
        var seen = lastHeard.withLock { $0 }, unheard = 0
        while true {
            try await Task.sleep(for: .seconds(seconds))
            let heardAt = lastHeard.withLock { $0 }
            if heardAt == seen { unheard += 1 } else { (seen, unheard) = (heardAt, 0) }
            let silent = ContinuousClock.now - heardAt
            if unheard >= 3, silent > .seconds(3 * seconds) {
                return "the server has been silent for \(silent.components.seconds) s"
            }
            ledger.pinging()
            try await outbound.write(.text(OutgoingFrame.ping))
        }
    }

    private func heard() { lastHeard.withLock { $0 = .now } }

    private func take(_ message: WebSocketMessage, ledger: ReportLedger) async {
        let text: String
        switch message {
        case .text(let t): text = t
        case .binary(let bytes):
            skipped("a binary frame of \(bytes.readableBytes) bytes (the API sends JSON text)")
            return
        }
        switch APIFrame.decode(text) {
        case .success(.new(let m)): await onEvent(.new(m.inboxMessage))
        case .success(.deleted(let id)): await onEvent(.deleted(messageID: id))
        case .success(.error(let code, let message)): logger.warning("message API error \(code): \(message)")
        case .success(.pong): ledger.ponged()
        case .success: break
        case .failure(let problem): skipped(problem.description)
        }
    }

    private func skipped(_ why: String) {
        state.withLock { $0.skippedFrames += 1 }
        logger.warning("message API: frame skipped: \(why)")
    }

    /// What an inbox answer may hold: 8 MiB, shallow.
    static let inboxLimits = JSONLimits(maxBytes: 8 << 20, maxDepth: 8, maxValues: 1 << 20)

    /// `GET …/inbox`: every message that reads; one that does not is logged and left out.
    private func fetchInbox(_ url: String) async throws -> [InboxMessage] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(config.token)")
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 8 << 20)
        guard response.status == .ok else {
            throw ClientError.inbox("GET \(url) answered \(response.status.code): \(APIFrame.preview(String(buffer: body)))")
        }
        do throws(JSONInputError) { try StrictJSON.check(Array(buffer: body), limits: Self.inboxLimits) } catch {
            throw ClientError.inbox("GET \(url) answered what is not JSON: \(error)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
              let list = object["messages"] as? [Any] else {
            throw ClientError.inbox("GET \(url) did not answer {\"messages\": […]}")
        }
        return list.enumerated().compactMap { i, item in
            do {
                let data = try JSONSerialization.data(withJSONObject: item)
                return try JSONDecoder().decode(APIMessage.self, from: data).inboxMessage
            } catch {
                skipped("inbox message \(i): \(APIFrame.reason(error))")
                return nil
            }
        }
    }

    enum ClientError: Error, CustomStringConvertible {
        case refused(String), silent(String), inbox(String)
        var description: String {
            switch self { case .refused(let s), .silent(let s), .inbox(let s): s }
        }
    }
}
