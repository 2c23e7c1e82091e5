import FlapCore
import FlapHubInput
import FlapMessages
import Hummingbird

extension Hub {
    /// Friends: list, request, accept, decline, remove, block (the seed's §5.2 endpoints).
    func friendRoutes(_ api: RouterGroup<BasicRequestContext>) {
        api.get("friends") { request, _ in
            let me = try await self.caller(request)
            var friends: [Friend] = []
            for f in try await self.store.friends(of: me.id) {
                let area = try await self.store.face(of: f.id)?.area(senderID: me.id, username: me.username)
                friends.append(Friend(id: f.id, username: f.username, displayName: f.displayName,
                                      board: area.map { Friend.Board(rows: $0.rows, cols: $0.cols, nameLine: $0.nameLine) }))
            }
            return try self.reply(200, ["friends": friends])
        }
        api.post("friends/requests") { request, _ in
            let me = try await self.caller(request)
            let body = try await self.json(request)
            guard let name = body["to"] as? String ?? body["userID"] as? String else {
                throw HubError(400, "\"to\" must name a user (id or username)")
            }
            guard let to = try await self.store.user(name) else { throw HubError(404, "no user '\(name)'") }
            if try await self.store.blocks(to.id, me.id) { throw HubError(403, "blocked") }
            let r = try await self.store.request(from: me.id, to: to.id, now: self.now())
            try await self.publish(.frame(user: to.id, text: WireFrame.friendRequest(requestID: r.id, fromUser: .init(id: me.id, username: me.username)).text))
            return try self.reply(201, r)
        }
        api.get("friends/requests") { request, _ in
            try self.reply(200, ["requests": try await self.store.pendingRequests(to: try await self.caller(request).id)])
        }
        api.post("friends/requests/:id/accept") { request, context in
            let me = try await self.caller(request)
            let r = try await self.pending(try context.parameters.require("id"), to: me)
            try await self.store.befriend(r.fromID, me.id, now: self.now())
            try await self.publish(.frame(user: r.fromID, text: WireFrame.friendAccepted(friendID: me.id).text))
            return try self.reply(200, ["status": "accepted"])
        }
        api.post("friends/requests/:id/decline") { request, context in
            let me = try await self.caller(request)
            let r = try await self.pending(try context.parameters.require("id"), to: me)
            try await self.store.decline(r.id)
            return try self.reply(200, ["status": "declined"])
        }
        api.delete("friends/:id") { request, context in
            let me = try await self.caller(request)
            let other = try await self.user(try context.parameters.require("id"))
            try await self.store.unfriend(me.id, other.id)
            return Response(status: .noContent)
        }
        api.post("friends/:id/block") { request, context in
            let me = try await self.caller(request)
            let other = try await self.user(try context.parameters.require("id"))
            try await self.store.block(me.id, other.id)
            return try self.reply(200, ["status": "blocked"])
        }
    }

    /// A friend as `GET /friends` lists them: with the size of the area their board gives the
    /// caller's messages, when it is a board that said (`board.face`).
    struct Friend: Encodable {
        var id: String
        var username: String
        var displayName: String?
        var board: Board?
        struct Board: Encodable {
            var rows: Int
            var cols: Int
            var nameLine: Bool
        }
    }

    private func pending(_ id: String, to me: HubStore.User) async throws -> HubStore.FriendRequest {
        guard let r = try await store.friendRequest(id), r.toID == me.id, r.status == "pending" else {
            throw HubError(404, "no pending friend request \(id) to you")
        }
        return r
    }

    private func user(_ name: String) async throws -> HubStore.User {
        guard let u = try await store.user(name) else { throw HubError(404, "no user '\(name)'") }
        return u
    }
}
