import FlapCore
import Hummingbird

extension Hub {
    /// Friends: list, request, accept, decline, remove, block (the seed's §5.2 endpoints).
    func friendRoutes(_ api: RouterGroup<BasicRequestContext>) {
        api.get("friends") { request, _ in
            try self.reply(200, ["friends": try self.store.friends(of: try self.caller(request).id)])
        }
        api.post("friends/requests") { request, _ in
            let me = try self.caller(request)
            let body = try await self.json(request)
            guard let name = body["to"] as? String ?? body["userID"] as? String else {
                throw HubError(400, "\"to\" must name a user (id or username)")
            }
            guard let to = try self.store.user(name) else { throw HubError(404, "no user '\(name)'") }
            if try self.store.blocks(to.id, me.id) { throw HubError(403, "blocked") }
            let r = try self.store.request(from: me.id, to: to.id, now: self.now())
            await self.sockets.send(WireFrame.friendRequest(requestID: r.id, fromUser: .init(id: me.id, username: me.username)).text, to: to.id)
            return try self.reply(201, r)
        }
        api.get("friends/requests") { request, _ in
            try self.reply(200, ["requests": try self.store.pendingRequests(to: try self.caller(request).id)])
        }
        api.post("friends/requests/:id/accept") { request, context in
            let me = try self.caller(request)
            let r = try self.pending(try context.parameters.require("id"), to: me)
            try self.store.befriend(r.fromID, me.id, now: self.now())
            await self.sockets.send(WireFrame.friendAccepted(friendID: me.id).text, to: r.fromID)
            return try self.reply(200, ["status": "accepted"])
        }
        api.post("friends/requests/:id/decline") { request, context in
            let me = try self.caller(request)
            let r = try self.pending(try context.parameters.require("id"), to: me)
            try self.store.decline(r.id)
            return try self.reply(200, ["status": "declined"])
        }
        api.delete("friends/:id") { request, context in
            let me = try self.caller(request)
            let other = try self.user(try context.parameters.require("id"))
            try self.store.unfriend(me.id, other.id)
            return Response(status: .noContent)
        }
        api.post("friends/:id/block") { request, context in
            let me = try self.caller(request)
            let other = try self.user(try context.parameters.require("id"))
            try self.store.block(me.id, other.id)
            return try self.reply(200, ["status": "blocked"])
        }
    }

    private func pending(_ id: String, to me: HubStore.User) throws -> HubStore.FriendRequest {
        guard let r = try store.friendRequest(id), r.toID == me.id, r.status == "pending" else {
            throw HubError(404, "no pending friend request \(id) to you")
        }
        return r
    }

    private func user(_ name: String) throws -> HubStore.User {
        guard let u = try store.user(name) else { throw HubError(404, "no user '\(name)'") }
        return u
    }
}
