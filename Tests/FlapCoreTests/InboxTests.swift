import FlapMessages
import Foundation
import FlapCore
import Testing

@Suite struct InboxTests {
    func message(_ id: String, from sender: String = "alice", text: String = "HI", at sentAt: Double = 1000,
                 unlock: Double? = nil) -> InboxMessage {
        InboxMessage(id: id, senderID: sender, senderName: sender, content: text, sentAt: sentAt, unlockAt: unlock)
    }

    @Test func theLatestOfEachSenderIsLive() {
        var inbox = Inbox()
        do { let r = inbox.receive(message("1", at: 1000), now: 1001); #expect(r == .shown) }
        do { let r = inbox.receive(message("2", from: "bob", at: 1002), now: 1003); #expect(r == .shown) }
        do { let r = inbox.receive(message("3", text: "NEWER", at: 1004), now: 1005); #expect(r == .shown) }
        #expect(inbox.visible.map(\.id) == ["2", "3"])
        // An older message arriving late does not replace a newer one.
        do { let r = inbox.receive(message("0", at: 999), now: 1006); #expect(r == .superseded) }
        #expect(inbox.live["alice"]?.id == "3")
    }

    @Test func aSecondDeliveryChangesNothing() {
        var inbox = Inbox()
        inbox.receive(message("1"), now: 1001)
        inbox.receive(message("2", at: 1002), now: 1003)
        do { let r = inbox.receive(message("1"), now: 1004); #expect(r == .duplicate) }
        #expect(inbox.live["alice"]?.id == "2")
        // Deleted ids stay known: a late re-delivery does not bring a deleted message back.
        do { let r = inbox.delete(id: "2", now: 1005); #expect(r) }
        do { let r = inbox.receive(message("2", at: 1002), now: 1006); #expect(r == .duplicate) }
        #expect(inbox.live.isEmpty)
    }

    @Test func aHeldMessageUnlocksAtItsInstantAndReplacesTheSendersMessage() {
        var inbox = Inbox()
        inbox.receive(message("1", text: "NOW"), now: 1001)
        do { let r = inbox.receive(message("2", text: "LATER", at: 1002, unlock: 2000), now: 1003); #expect(r == .held) }
        #expect(inbox.live["alice"]?.id == "1")
        #expect(inbox.nextChange == 2000)
        do { let r = inbox.advance(now: 1999); #expect(!r) }
        do { let r = inbox.advance(now: 2000); #expect(r) }
        #expect(inbox.live["alice"]?.id == "2")
        #expect(inbox.held.isEmpty)
    }

    @Test func messagesExpire48HoursAfterTheyWereSent() {
        var inbox = Inbox()
        inbox.receive(message("1", at: 1000), now: 1000)
        let end = 1000 + 48 * 3600.0
        #expect(inbox.nextChange == end)
        do { let r = inbox.advance(now: end - 1); #expect(!r) }
        do { let r = inbox.advance(now: end); #expect(r) }
        #expect(inbox.live.isEmpty)
        do { let r = inbox.receive(message("9", at: 1000), now: end + 1); #expect(r == .expired) }
        // A held message whose unlock lies past its expiry never shows.
        inbox.receive(message("h", at: end, unlock: end + 48 * 3600 + 10), now: end + 1)
        do { let r = inbox.advance(now: end + 48 * 3600 + 20); #expect(!r) }
        #expect(inbox.live.isEmpty && inbox.held.isEmpty)
    }

    @Test func aCatchUpMakesTheInboxWhatTheServerHas() {
        var inbox = Inbox()
        inbox.receive(message("1", from: "alice"), now: 1001)
        inbox.receive(message("2", from: "bob"), now: 1001)
        // While away: bob's message was deleted, carol sent one, alice's was re-sent as is.
        let changed = inbox.sync(with: [message("1", from: "alice"), message("3", from: "carol", at: 1500)], now: 1600)
        #expect(changed)
        #expect(inbox.visible.map(\.id) == ["1", "3"])
        do { let r = inbox.sync(with: [message("1", from: "alice"), message("3", from: "carol", at: 1500)], now: 1601); #expect(!r) }
    }

    @Test func theInboxRoundTripsThroughJSON() throws {
        var inbox = Inbox()
        inbox.receive(message("1"), now: 1001)
        inbox.receive(message("2", from: "bob", unlock: 5000), now: 1001)
        let data = try JSONEncoder().encode(inbox)
        let back = try JSONDecoder().decode(Inbox.self, from: data)
        #expect(back == inbox)
        var again = back
        do { let r = again.receive(message("1"), now: 1002); #expect(r == .duplicate) }
    }

    @Test func theServersExpiryWinsWhenSooner() {
        var inbox = Inbox()
        var short = message("s", at: 1000)
        short.expiry = 1010
        inbox.receive(short, now: 1001)
        #expect(inbox.nextChange == 1010)
        do { let r = inbox.advance(now: 1010); #expect(r) }
        #expect(inbox.live.isEmpty)
        var long = message("l", at: 1000)
        long.expiry = 1000 + 100 * 3600
        #expect(long.expiresAt == 1000 + 48 * 3600)
    }
}

/// What a server or a state file says of a message's times is bounded before a board waits on it.
@Suite struct BoundedTimesTests {
    @Test func everyTimeIsBroughtWithinWhatABoardCanWaitFor() throws {
        let far = InboxMessage(id: "m", senderID: "s", senderName: "s", content: "x", sentAt: -1e308, unlockAt: 1e308,
                               expiry: .infinity, arriveAt: 1e300, duration: 1e9, holdSeconds: -5, dwellSeconds: 1e12).bounded
        #expect(far.sentAt == 0 && far.unlockAt == 4_102_444_800 && far.expiry == 4_102_444_800 && far.arriveAt == 4_102_444_800)
        #expect(far.duration == 43_200 && far.holdSeconds == 0 && far.dwellSeconds == 86_400)
        let plain = InboxMessage(id: "m", senderID: "s", senderName: "s", content: "x", sentAt: 1_800_000_000, unlockAt: 1_800_000_100)
        #expect(plain.bounded == plain)
    }

    @Test func aServersMessageAndASavedInboxAreBounded() throws {
        let api = APIMessage(id: "m", senderID: "s", senderUsername: "s", content: "x", contentType: .text, timestamp: 1e308,
                             unlockAt: 1e308, arriveAt: -1e300)
        let m = api.inboxMessage
        #expect(m.sentAt == 4_102_444_800 && m.unlockAt == 4_102_444_800 && m.arriveAt == 0)
        let saved = #"{"live":{"s":{"id":"l","senderID":"s","senderName":"s","content":"x","contentType":"text","sentAt":1e308}},"#
            + #""held":[{"id":"h","senderID":"t","senderName":"t","content":"y","contentType":"text","sentAt":1,"unlockAt":1e308}],"seen":{}}"#
        let inbox = try JSONDecoder().decode(Inbox.self, from: Data(saved.utf8))
        #expect(inbox.live["s"]?.sentAt == 4_102_444_800)
        #expect(inbox.held.first?.unlockAt == 4_102_444_800)
    }
}
