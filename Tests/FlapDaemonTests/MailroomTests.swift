@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapMessages
import FlapNet
import FlapTerminal
import Foundation
import Logging
import Synchronization
import Testing
@testable import FlapDaemon

/// The mailroom in-process, on a wall whose conductor is not started (plans are made, nothing
/// plays), with its inbox saved in a folder of its own.
@Suite struct MailroomTests {
    static let config = """
        message_api: { url: "http://127.0.0.1:9/", token: "t" }
        zones:
          - { board: wall, rows: [0, 2], senders: [alice] }
          - { board: wall, rows: [3, 5], senders: "*" }
        """

    /// A mailroom, the store it saves to, and every line it logged.
    func mailroom(_ yaml: String = config) throws -> (Mailroom, InboxStore, Logged) {
        let (mailroom, _, store, logged) = try mailroom(yaml, clock: nil)
        return (mailroom, store, logged)
    }

    /// The same on the wall it shows on, on a clock of the test's own (`clock`, seconds since
    /// 1970; nil: the real one).
    func mailroom(_ yaml: String, clock: Clock?) throws -> (Mailroom, Wall, InboxStore, Logged) {
        let config = try ConfigLoader.parse(yaml)
        let logged = Logged()
        let logger = Logger(label: "test") { _ in logged }
        let store = InboxStore(directory: NSTemporaryDirectory() + "mailroom-\(UUID().uuidString)")
        let wall = Wall(config: config, drivers: [], logger: logger)
        let now: @Sendable () -> Double
        if let clock { now = { clock.now } } else { now = { Date().timeIntervalSince1970 } }
        return (Mailroom(wall: wall, zones: config.routedZones, store: store, logger: logger, now: now) { _, _ in }, wall, store, logged)
    }

    /// A clock the test moves by hand.
    final class Clock: Sendable {
        private let seconds = Mutex<Double>(1_800_000_000)
        var now: Double { seconds.withLock { $0 } }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    /// The rows of a board's target, trimmed.
    func rows(_ wall: Wall) -> [String] {
        PlainFrame.rows(wall.target(board: 0)).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Issue 13, item 5: what each zone shows over time, by the one rule — the newest message
    /// of its senders; a held letter at its unlock time; a message gone when deleted or 48 h
    /// after it was sent; with `rotate_seconds`, each live sender in turn.
    @Test func zonesShowTheNewestAndFollowHoldsDeletionExpiryAndRotation() async throws {
        let clock = Clock()
        let (mailroom, wall, _, _) = try mailroom("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones:
              - { board: wall, rows: [0, 2], senders: [alice] }
              - { board: wall, rows: [3, 5], senders: "*", rotate_seconds: 10 }
            """, clock: clock)
        func message(_ id: String, from sender: String, text: String, unlockAt: Double? = nil) -> InboxMessage {
            InboxMessage(id: id, senderID: sender, senderName: sender, content: text, sentAt: clock.now, unlockAt: unlockAt)
        }
        await mailroom.take(.new(message("a1", from: "alice", text: "FIRST")))
        await mailroom.take(.new(message("a2", from: "alice", text: "SECOND")))
        #expect(rows(wall).contains("SECOND") && !rows(wall).contains("FIRST"), "the newest of a sender: \(rows(wall))")
        // Held for a minute: nothing until then, then it shows.
        await mailroom.take(.new(message("b1", from: "bob", text: "LATER", unlockAt: clock.now + 60)))
        #expect(!rows(wall).contains("LATER"))
        clock.advance(61)
        await mailroom.refresh()
        #expect(rows(wall).contains("LATER"), "\(rows(wall))")
        // A second sender in the rotating zone: the newest first, then each in turn.
        await mailroom.take(.new(message("c1", from: "carol", text: "CAROL")))
        #expect(rows(wall).contains("CAROL") && !rows(wall).contains("LATER"))
        clock.advance(10)
        await mailroom.refresh()
        #expect(rows(wall).contains("LATER") && !rows(wall).contains("CAROL"), "rotated: \(rows(wall))")
        // Deleted: gone, and the zone shows who is left.
        await mailroom.take(.deleted(messageID: "b1"))
        #expect(rows(wall).contains("CAROL") && !rows(wall).contains("LATER"), "\(rows(wall))")
        // 48 hours after they were sent, every message is gone.
        clock.advance(InboxMessage.lifetime)
        await mailroom.refresh()
        #expect(rows(wall).allSatisfy { $0.isEmpty }, "\(rows(wall))")
    }

    func message(_ id: String, from sender: String, unlockAt: Double? = nil) -> InboxMessage {
        InboxMessage(id: id, senderID: sender, senderName: sender, content: "HELLO \(id)",
                     sentAt: Date().timeIntervalSince1970, unlockAt: unlockAt)
    }

    /// Issue 13, bug 1: two zones settling at once saved the inbox at once, through one
    /// temporary file — `cannot save the inbox: …/inbox.json: No such file or directory` — and
    /// the older of two saves could land last. Saves now take turns, the newest last.
    @Test func messagesTakenAtOnceAreSavedWholeAndWithoutError() async throws {
        let (mailroom, store, logged) = try mailroom()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask { for k in 0..<10 { await mailroom.take(.new(self.message("m\(thread)-\(k)", from: "sender\(thread)"))) } }
            }
        }
        let failures = logged.lines.filter { $0.contains("cannot save") }
        #expect(failures.isEmpty, "\(failures.count) saves failed, the first: \(failures.first ?? "")")
        let saved = try store.load().inbox
        #expect(saved == mailroom.inbox)
        #expect(Set(saved.live.values.map(\.id)) == Set((0..<8).map { "m\($0)-9" }))
    }

    /// A message's landing plan never traps on its times, whichever door it came in by: the API's
    /// and the inbox file's bound them, but a message built another way is planned too (an
    /// arrival of 1e300 trapped in the plan's conversion to Int64 nanoseconds).
    @Test func aLandingFarAheadIsPlannedWithin2100() throws {
        let board = try ConfigLoader.parse("boards: [{ id: wall }]").boards[0]
        let now = 1_800_000_000.0
        for far in [1e300, .infinity, 1e19] {
            let m = InboxMessage(id: "m", senderID: "s", senderName: "s", content: "x", sentAt: now, arriveAt: far)
            let style = try #require(Mailroom.style(of: m, on: board, now: now))
            #expect(style.arrival == .at(4_102_444_800_000_000_000), "\(far)")
        }
        let near = InboxMessage(id: "m", senderID: "s", senderName: "s", content: "x", sentAt: now, arriveAt: now + 2.5)
        #expect(Mailroom.style(of: near, on: board, now: now)?.arrival == .at(2_500_000_000))
    }

    /// Issue 13, bug 3: a sender no zone takes got `message shown` logged for each of its
    /// messages, which were not. It now says where the message went: nowhere.
    @Test func aSenderInNoZoneIsNotLoggedAsShown() async throws {
        let (mailroom, _, logged) = try mailroom("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones: [{ board: wall, senders: [alice] }]
            """)
        await mailroom.take(.new(message("c1", from: "carol")))
        await mailroom.take(.new(message("a1", from: "alice")))
        let lines = logged.lines
        #expect(!lines.contains { $0.contains("message shown") && $0.contains("c1") }, "\(lines)")
        #expect(lines.contains { $0.contains("message not shown: its sender is in no zone") && $0.contains("c1") }, "\(lines)")
        #expect(lines.contains { $0.contains("message shown") && $0.contains("a1") }, "\(lines)")
    }

    /// Issue 13, bug 2: a held letter was counted (`/status` reads `inbox`) before `inbox.json`
    /// held it, and a SIGKILL in that gap lost it. Now the inbox counts nothing the file lacks.
    @Test func aHeldLetterCountsOnlyOnceItIsOnDisk() async throws {
        let (mailroom, store, _) = try mailroom()
        let unlock = Date().timeIntervalSince1970 + 3600
        for k in 0..<20 {
            let letter = message("held\(k)", from: "bob", unlockAt: unlock)
            let done = Atomic(false)
            let taker = Task.detached { await mailroom.take(.new(letter)); done.store(true, ordering: .releasing) }
            // Watches the count as `/status` would; the moment it counts the letter, the file must hold it.
            while true {
                let finished = done.load(ordering: .acquiring)  // read first: once taken, it counts
                if mailroom.inbox.held.contains(where: { $0.id == letter.id }) {
                    #expect(try store.load().inbox.held.contains { $0.id == letter.id }, "letter \(k) counted before it was saved")
                    break
                }
                if finished { Issue.record("letter \(k) was never counted"); return }
                await Task.yield()
            }
            await taker.value
        }
    }
}

/// Every message logged, as one line each.
final class Logged: LogHandler, Sendable {
    private let store = Mutex<[String]>([])
    var lines: [String] { store.withLock { $0 } }
    var logLevel: Logger.Level { get { .trace } set {} }
    var metadata: Logger.Metadata { get { [:] } set {} }
    subscript(metadataKey _: String) -> Logger.Metadata.Value? { get { nil } set {} }

    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        store.withLock { $0.append((["\(event.level) \(event.message)"] + fields).joined(separator: " ")) }
    }
}
