@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapMessages
import Foundation
import Testing
@testable import FlapDaemon

/// Issue 13, item 1: the local API is a sender of its own (`@local`) on the one way in — the
/// inbox, the router, the composer — and one rule decides what a board shows, whatever the
/// source: the newer message is drawn over the older.
extension MailroomTests {
    func apiMessage(_ id: String, from sender: String, text: String, at: Double) -> InboxMessage {
        InboxMessage(id: id, senderID: sender, senderName: sender, content: text, sentAt: at)
    }

    /// By default the local sender has the whole board; a message-API message that comes later
    /// is drawn over it in its zone only, and the local message shows again where that goes.
    @Test func theNewerMessageIsDrawnOverTheOlderWhateverItsSource() async throws {
        let clock = Clock()
        let (mailroom, wall, _, _) = try mailroom(Self.config, clock: clock)
        let posted = try #require(await mailroom.post("LOCAL ONE\nLOCAL TWO\nLOCAL THREE\nLOCAL FOUR\nLOCAL FIVE\nLOCAL SIX", type: .text))
        #expect(posted.frame == wall.target(board: 0))
        #expect(rows(wall) == ["LOCAL ONE", "LOCAL TWO", "LOCAL THREE", "LOCAL FOUR", "LOCAL FIVE", "LOCAL SIX"])
        clock.advance(1)
        await mailroom.take(.new(apiMessage("a1", from: "alice", text: "FROM ALICE", at: clock.now)))
        #expect(rows(wall) == ["", "FROM ALICE", "", "LOCAL FOUR", "LOCAL FIVE", "LOCAL SIX"], "alice's zone over the local message")
        clock.advance(1)
        _ = await mailroom.post("NEWER", type: .text)
        #expect(rows(wall) == ["", "", "NEWER", "", "", ""], "the newer local message over alice's")
        clock.advance(1)
        await mailroom.take(.new(apiMessage("b1", from: "bob", text: "FROM BOB", at: clock.now)))
        #expect(rows(wall) == ["", "", "NEWER", "", "FROM BOB", ""])
        await mailroom.take(.deleted(messageID: "b1"))
        #expect(rows(wall) == ["", "", "NEWER", "", "", ""], "deleted: the local message shows again where bob's was")
    }

    /// A message the API sent before the local one (caught up later, or held till now) is older
    /// and goes under it; the local message never expires, and a catch-up leaves it alone.
    @Test func theLocalMessageStaysUntilTheNextWhateverTheAPISays() async throws {
        let clock = Clock()
        let (mailroom, wall, _, _) = try mailroom(Self.config, clock: clock)
        _ = await mailroom.post("STAYS", type: .text)
        await mailroom.take(.caughtUp([apiMessage("a0", from: "alice", text: "EARLIER", at: clock.now - 60)]))
        #expect(rows(wall) == ["", "", "STAYS", "", "", ""], "an older message goes under")
        clock.advance(3 * InboxMessage.lifetime)
        await mailroom.refresh()
        #expect(rows(wall) == ["", "", "STAYS", "", "", ""], "48 h and more later")
        #expect(mailroom.inbox.live[InboxMessage.localSenderID] != nil)
    }

    /// A zone that lists `@local` takes the local sender instead of the whole board, and `*`
    /// zones never take it; message-API senders cannot claim its id.
    @Test func aZoneThatListsTheLocalSenderIsWhereItsMessagesGo() async throws {
        let (mailroom, wall, _, logged) = try mailroom("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones:
              - { board: wall, rows: [0, 1], senders: ["@local"] }
              - { board: wall, rows: [2, 5], senders: "*" }
            """, clock: Clock())
        let posted = try #require(await mailroom.post("MINE", type: .text))
        #expect(rows(wall) == ["MINE", "", "", "", "", ""], "in its own zone only")
        #expect(posted.transition.plan.flipCount > 0)
        await mailroom.take(.new(InboxMessage(id: "x", senderID: InboxMessage.localSenderID, senderName: "@local", content: "FAKE", sentAt: Date().timeIntervalSince1970)))
        #expect(rows(wall) == ["MINE", "", "", "", "", ""])
        #expect(logged.lines.contains { $0.contains("claims a sender id of the board's own (@…); dropped") })
        // A schedule entry's id too: only the board's schedule speaks as it.
        await mailroom.take(.new(InboxMessage(id: "y", senderID: "@schedule:tea", senderName: "tea", content: "FAKE", sentAt: Date().timeIntervalSince1970)))
        #expect(rows(wall) == ["MINE", "", "", "", "", ""])
        #expect(logged.lines.filter { $0.contains("claims a sender id of the board's own") }.count == 2)
    }

    /// Codes posted as the Vestaboard Local API does: the board shows them, with what the drum
    /// lacks substituted; the same message again is shown again — a transition of its own, which
    /// on a settled board has no flips (`StateTests` plays that; this conductor does not play).
    @Test func codesOfTheLocalSenderShowAndTheSameAgainMovesNothing() async throws {
        let (mailroom, wall, _, _) = try mailroom(Self.config + "\nboards: [{ id: wall, drum: standard }]\n", clock: Clock())
        var codes = Array(repeating: Array(repeating: 0, count: 22), count: 6)
        codes[0][0] = 8; codes[0][1] = 9; codes[1][0] = 63
        let first = try #require(await mailroom.post(PatternCodes.text(codes), type: .pattern))
        #expect(first.transition.plan.flipCount > 0)
        #expect(rows(wall).first == "HI")
        #expect(!first.substitutions.isEmpty, "code 63 (a colour) is not on the standard drum")
        let again = try #require(await mailroom.post(PatternCodes.text(codes), type: .pattern))
        #expect(again.frame == first.frame && again.transition.number == first.transition.number + 1)
    }

    /// The local message is kept in `inbox.json` like any other and comes back at a restart; a
    /// state dir from before it was (no inbox file) keeps what its board showed.
    @Test func theLocalMessageSurvivesARestartAndAnOlderStateDirKeepsItsBoard() async throws {
        let (mailroom, wall, store, _) = try mailroom(Self.config, clock: Clock())
        _ = await mailroom.post("KEPT", type: .text)
        let saved = try store.load().inbox
        #expect(saved.live[InboxMessage.localSenderID]?.content == "KEPT")

        let config = try ConfigLoader.parse(Self.config)
        for hadInbox in [true, false] {
            if !hadInbox { try FileManager.default.removeItem(atPath: store.file) }
            let restarted = Wall(config: config, drivers: [], logger: .init(label: "test"))
            let target = wall.target(board: 0).codes.flatMap { $0 }
            _ = restarted.restore(board: 0, positions: target, target: target)
            let again = Mailroom(wall: restarted, zones: config.routedZones, store: store, logger: .init(label: "test")) { _, _ in }
            await again.restore()
            #expect(restarted.target(board: 0) == wall.target(board: 0), hadInbox ? "from inbox.json" : "from the board's saved target")
            #expect(again.inbox.live[InboxMessage.localSenderID] != nil)
        }
    }

    /// Only message-API messages are reported displayed to the API; the local sender's never.
    @Test func onlyMessageAPIMessagesAreReportedDisplayed() async throws {
        let clock = Clock()
        let (mailroom, _, _, _) = try mailroom(Self.config, clock: clock)
        let reported = AsyncStream<String>.makeStream()
        mailroom.reportDisplayed { reported.continuation.yield($0) }
        let running = Task { await mailroom.run() }  // reports come from its settle waits
        defer { running.cancel() }
        _ = await mailroom.post("LOCAL", type: .text)
        clock.advance(1)
        await mailroom.take(.new(apiMessage("a1", from: "alice", text: "ALICE", at: clock.now)))
        var iterator = reported.stream.makeAsyncIterator()
        #expect(await iterator.next() == "a1")
        clock.advance(1)
        _ = await mailroom.post("LOCAL AGAIN", type: .text)
        clock.advance(1)
        await mailroom.take(.new(apiMessage("b1", from: "bob", text: "BOB", at: clock.now)))
        #expect(await iterator.next() == "b1", "the next report is bob's, not a local message's")
    }
}
