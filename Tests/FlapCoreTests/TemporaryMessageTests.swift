import FlapMessages
import Foundation
import FlapCore
import Testing

/// Issue 15, item 6: a temporary message shows for its duration, then what its sender showed
/// before comes back — by the inbox's one rule, for the local sender and for the message API's.
@Suite struct TemporaryMessageTests {
    func message(_ id: String, from sender: String = "alice", at sentAt: Double = 1000, duration: Double? = nil) -> InboxMessage {
        InboxMessage(id: id, senderID: sender, senderName: sender, content: id, sentAt: sentAt, duration: duration)
    }

    @Test func theMessageBeneathComesBackWhenTheDurationIsOver() {
        for sender in ["alice", InboxMessage.localSenderID] {
            var inbox = Inbox()
            inbox.receive(message("before", from: sender, at: 1000), now: 1000)
            inbox.receive(message("alert", from: sender, at: 1010, duration: 30), now: 1010)
            #expect(inbox.live[sender]?.id == "alert")
            #expect(inbox.nextChange == 1040, "the inbox wakes when the alert is over")
            let early = inbox.advance(now: 1039.9)
            let over = inbox.advance(now: 1040)
            #expect(!early && over)
            #expect(inbox.live[sender]?.id == "before", "\(sender)")
            #expect(inbox.beneath.isEmpty)
        }
    }

    @Test func aSecondAlertKeepsTheFirstMessageBeneathAndANewMessageEndsIt() {
        var inbox = Inbox()
        inbox.receive(message("before", at: 1000), now: 1000)
        inbox.receive(message("alert1", at: 1010, duration: 60), now: 1010)
        inbox.receive(message("alert2", at: 1020, duration: 60), now: 1020)
        inbox.advance(now: 1080)
        #expect(inbox.live["alice"]?.id == "before", "over at 1080: the message before both alerts, not the first alert")
        inbox.receive(message("alert3", at: 1100, duration: 60), now: 1100)
        inbox.receive(message("after", at: 1110), now: 1110)
        #expect(inbox.live["alice"]?.id == "after" && inbox.beneath.isEmpty, "a lasting message replaces both")
        inbox.advance(now: 1200)
        #expect(inbox.live["alice"]?.id == "after")
    }

    @Test func deletingTheAlertOrWhatIsBeneathIt() {
        var inbox = Inbox()
        inbox.receive(message("before", at: 1000), now: 1000)
        inbox.receive(message("alert", at: 1010, duration: 60), now: 1010)
        let deleted = inbox.delete(id: "alert", now: 1020)
        #expect(deleted)
        #expect(inbox.live["alice"]?.id == "before")
        inbox.receive(message("alert2", at: 1030, duration: 60), now: 1030)
        let wasLive = inbox.delete(id: "before", now: 1031)
        #expect(!wasLive)
        inbox.advance(now: 1090)
        #expect(inbox.live["alice"] == nil, "what was beneath was deleted: nothing comes back")
    }

    @Test func anInboxSavedBeforeTemporaryMessagesStillReads() throws {
        var inbox = Inbox()
        inbox.receive(message("before", at: 1000), now: 1000)
        inbox.receive(message("alert", at: 1010, duration: 60), now: 1010)
        let saved = try JSONEncoder().encode(inbox)
        #expect(try JSONDecoder().decode(Inbox.self, from: saved) == inbox, "the alert and what is beneath it survive a restart")
        var old = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
        old["beneath"] = nil
        let earlier = try JSONDecoder().decode(Inbox.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(earlier.live["alice"]?.id == "alert" && earlier.beneath.isEmpty)
    }
}
