import EndToEndSupport
import Foundation
import Testing
import TestWaits
#if canImport(Glibc)
import Glibc
#endif

/// flapd against a message API that misbehaves: every bad frame is logged with what was wrong
/// and skipped, a 10 MB frame ends the connection (then reconnect), a silent server is taken
/// for dead, duplicates show once, and a message that reaches 48 h flips off — and no good
/// message is ever lost.
@Suite struct BadServerTests {
    @Test func badFramesAreSkippedAndGoodMessagesStillShow() async throws {
        let now = Date().timeIntervalSince1970
        let good = ScriptedAPI.message("g1", from: "alice", "good one")
        // It fades 60 s in: time enough, on a loaded machine too, to be shown and reported first
        // (15 s was not, under stress-ng and two builds: e1 expired unshown, reported 0 times).
        let fading = ScriptedAPI.message("e1", from: "old", "fading", at: now - 48 * 3600 + 60)
        let after = ScriptedAPI.message("g2", from: "bob", "after reconnect")
        let goodFrame = ScriptedAPI.new(good), afterFrame = ScriptedAPI.new(after)
        // The server's inbox once bob has sent his: what a catch-up then finds.
        let laterInbox = ScriptedAPI.inbox([["id": "bad"], fading, good, after])
        let api = ScriptedAPI(inbox: ScriptedAPI.inbox([["id": "bad"], fading, good])) { connection, api, frames, out in
            switch connection {
            case 1:
                // Pings are answered until one after g1's report: its pong confirms g1 (never
                // written again); what is reported after goes unconfirmed.
                frames.pongs = out
                for bad in ["not json at all", #"{"type":"message.exploded"}"#,
                            #"{"type":"message.new","message":{"id":"x","senderID":"s","senderUsername":"s","contentType":"text","timestamp":1}}"#] {
                    try await out.write(.text(bad))
                }
                try await out.write(.binary(.init(string: "\u{1}\u{2}")))
                try await out.write(.text(goodFrame))
                try await out.write(.text(goodFrame))
                // The board reports e1 and g1 in either order.
                let reported = { (id: String) in
                    if api.count(#""messageID":"\#(id)""#, on: 1) == 0 { try await frames.wait(for: #""messageID":"\#(id)""#) }
                }
                try await reported("g1")
                try await frames.wait(for: #""type":"ping""#)
                frames.pongs = nil
                try await reported("e1")
                try await out.write(.text(String(repeating: "x", count: 10 << 20)))
                while try await frames.next() != nil {}
            case 2:
                api.inbox.withLock { $0 = laterInbox }
                try await out.write(.text(afterFrame))
                try await frames.wait(for: #""messageID":"g2""#)
                // Silence: read on, answer nothing.
                while try await frames.next() != nil {}
            default:
                while let f = try await frames.next() {
                    if f.contains("ping") { try await out.write(.text(#"{"type":"pong"}"#)) }
                }
            }
        }
        let port = try await api.start()
        defer { api.stop() }
        let (board, dir) = try Self.board(port: port, extra: """
            zones:
              - { rows: [0, 2], senders: [old] }
              - { rows: [3, 5], senders: "*" }
            """)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // The silent server is given up and a third connection made.
        // (Seen once under stress-ng: flapd logged nothing for 2 minutes after showing g1 and e1 —
        // not even its keepalive's "silent for" — and the server had only authenticated: flapd's
        // threads are printed when this fails, to see where it stood.)
        let gaveUp = await board.waitForLog("silent for")
        let stacks = gaveUp ? "" : await board.threadStacks()
        #expect(gaveUp, "\(board.stderr)\nthe server: \(api.journal.withLock { $0 })\nflapd's threads:\n\(stacks)")
        #expect(await eventually { api.scripted.withLock { $0 } >= 3 })
        // The message at 48 h flips off; the good ones were shown and reported once each.
        #expect(await board.waitForFrame { words($0) == ["AFTER RECONNECT"] && $0[4].contains("AFTER") }, "\(board.stdout)\n\(board.stderr)")
        #expect(api.count(#""messageID":"g1""#) == 1)
        // e1 fades 60 s after the test began: shown and reported once on any machine that shows
        // it by then; a starved one (CI: flapd started late among the suites) may not, and then it
        // is never shown nor reported. What always holds: reported exactly as often as shown, once.
        let shownE1 = board.stderr.split(separator: "\n").contains { $0.contains("message displayed") && $0.contains("id=e1") }
        if !shownE1 { print("BadServerTests: e1 faded before the board showed it (a starved machine)") }
        // A report follows the board's settling (and waits for a connection when there is none):
        // the server has it once it comes, not when the frame is printed.
        if shownE1 { #expect(await eventually { api.count(#""messageID":"e1""#) >= 1 }, "\(board.stderr.suffix(3000))") }
        #expect(api.count(#""messageID":"e1""#, on: 1) == (shownE1 ? 1 : 0), "\(board.stderr.suffix(3000))")
        // g2 is reported on the silent connection (or not: the report may come as it is given up,
        // as in CI of 8c62781, where it was lost), never confirmed there, so written again on the
        // next — once, as that server answers. e1, unconfirmed if its report came after the pong.
        let received = { "\(api.received.withLock { $0 })\n\(board.stderr.suffix(3000))" }
        #expect(await eventually { api.count(#""messageID":"g2""#, on: 3) >= 1 }, "\(received())")
        #expect(api.count(#""messageID":"g2""#, on: 3) == 1, "\(received())")
        #expect(api.count(#""messageID":"g2""#) <= 2 && api.count(#""messageID":"e1""#, on: 3) <= 1, "\(received())")
        // Three connections each logged once their catch-up is done (the third's may come after its frames).
        #expect(await board.waitUntil { _, e in e.components(separatedBy: "message API connected").count - 1 >= 3 }, "\(board.stderr)")
        let log = board.stderr
        for expected in ["frame skipped: not a JSON object: not json at all", "frame skipped: unknown type 'message.exploded'",
                         "frame skipped: message.new without a valid message: missing 'message.content'",
                         "frame skipped: a binary frame of 2 bytes", "frame skipped: inbox message 0: missing",
                         "message duplicate", "silent for"] {
            #expect(log.contains(expected), "\(expected)")
        }
        board.terminate()
        #expect(await board.waitForExit() == 0)
        #expect(!log.contains("t0ken"))
    }

    /// A report the server never confirmed is not lost with the process: a flapd started again
    /// on the same state reports again what its board still shows (and the hub tells its sender
    /// once). The first server reads the report and answers no ping; the second answers. (The
    /// board restored does not move, so the second prints no frame.)
    @Test(.timeLimit(.minutes(3))) func aRestartReportsAgainWhatTheBoardStillShows() async throws {
        let shown = ScriptedAPI.message("r1", from: "alice", "still here")
        let api = ScriptedAPI(inbox: ScriptedAPI.inbox([shown])) { connection, _, frames, out in
            if connection > 1 { frames.pongs = out }
            while try await frames.next() != nil {}
        }
        let port = try await api.start()
        defer { api.stop() }
        let (first, dir) = try Self.board(port: port, ping: 30)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(await first.waitForFrame { words($0) == ["STILL HERE"] }, "\(first.stdout)")
        #expect(await eventually { api.count(#""messageID":"r1""#, on: 1) == 1 }, "\(first.stderr)")
        first.terminate()
        #expect(await first.waitForExit() == 0)
        let second = try FlapdProcess(["run", "--config", dir + "/flapd.yaml", "--plain", "--no-sound", "--state-dir", dir])
        defer { second.terminate() }
        #expect(await eventually { api.count(#""messageID":"r1""#, on: 2) >= 1 }, "\(second.stderr)")
        #expect(api.count(#""messageID":"r1""#, on: 2) == 1, "\(api.received.withLock { $0 })")
        second.terminate()
        #expect(await second.waitForExit() == 0)
    }

    /// A server's times past any a board can wait for — an unlock of 1e308, an arrival of 1e300
    /// — are bounded (`InboxMessage.bounded`: 1970 to 2100): flapd died at its wait (`Duration`
    /// traps past some 10²⁰ s) and, the message kept in `inbox.json`, at every start after. It
    /// lives, the next message shows, and a restart on the same state shows it again.
    @Test(.timeLimit(.minutes(3))) func timesNoBoardCanWaitForAreBounded() async throws {
        var held = ScriptedAPI.message("h1", from: "alice", "far off")
        held["unlockAt"] = 1e308
        var arriving = ScriptedAPI.message("a1", from: "bob", "arrives late")
        arriving["arriveAt"] = 1e300
        let after = ScriptedAPI.new(ScriptedAPI.message("g1", from: "carol", "still flips"))
        let api = ScriptedAPI(inbox: ScriptedAPI.inbox([held, arriving])) { _, _, frames, out in
            frames.pongs = out
            try await out.write(.text(after))
            while try await frames.next() != nil {}
        }
        let port = try await api.start()
        defer { api.stop() }
        let (board, dir) = try Self.board(port: port, extra: """
            zones:
              - { rows: [0, 1], senders: [alice] }
              - { rows: [2, 3], senders: [bob] }
              - { rows: [4, 5], senders: [carol] }
            """)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(await board.waitForFrame { $0[4].contains("STILL") }, "\(board.stdout.suffix(2000))\n\(board.stderr.suffix(3000))")
        board.terminate()
        #expect(await board.waitForExit() == 0, "\(board.stderr.suffix(3000))")
        let again = try FlapdProcess(["run", "--config", dir + "/flapd.yaml", "--plain", "--no-sound", "--state-dir", dir])
        defer { again.terminate() }
        #expect(await again.waitForLog("inbox restored"), "\(again.stderr.suffix(3000))")
        #expect(await eventually { api.scripted.withLock { $0 } >= 2 }, "\(again.stderr.suffix(3000))")
        again.terminate()
        #expect(await again.waitForExit() == 0, "\(again.stderr.suffix(3000))")
    }

    /// A server that upgrades and then never answers `authenticate` is left after 3 pings'
    /// time (issue 18: the client waited for ever), and the next connection works.
    @Test(.timeLimit(.minutes(3))) func aServerThatNeverAuthenticatesIsLeft() async throws {
        let api = ScriptedAPI(inbox: ScriptedAPI.inbox([]), authenticates: { $0 > 1 }) { _, _, frames, out in
            try await out.write(.text(ScriptedAPI.new(ScriptedAPI.message("n1", from: "alice", "second try"))))
            while let f = try await frames.next() {
                if f.contains("ping") { try await out.write(.text(#"{"type":"pong"}"#)) }
            }
        }
        let port = try await api.start()
        defer { api.stop() }
        let (board, dir) = try Self.board(port: port)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(await board.waitForLog("none came within 3"), "\(board.stderr)")
        #expect(await board.waitForFrame { words($0) == ["SECOND TRY"] }, "\(board.stdout)\n\(board.stderr)")
        board.terminate()
        #expect(await board.waitForExit() == 0)
    }

    /// A server that takes the connection and never answers the upgrade is left after 3 pings'
    /// time, its socket closed (issue 18: the client waited for ever, one socket held).
    @Test(.timeLimit(.minutes(3))) func aServerThatNeverAnswersTheUpgradeIsLeft() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let (board, dir) = try Self.board(port: silent.port)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(await board.waitForLog("no answer to the WebSocket upgrade within 3 s"), "\(board.stderr)")
        // The first connection was closed by flapd, which came back for another.
        #expect(await silent.waitUntil { $0.closed >= 1 && $0.accepted >= 2 }, "\(silent.counts)")
        board.terminate()
        #expect(await board.waitForExit() == 0)
    }

    /// A stop while the upgrade waits ends it at once, not when its deadline comes (3 pings of
    /// 30 s here): flapd closes the socket and exits 0 without calling the server late.
    @Test(.timeLimit(.minutes(3))) func aStopDuringTheUpgradeEndsIt() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let (board, dir) = try Self.board(port: silent.port, ping: 30)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // flapd prints nothing once connected: the listener's own count is waited for.
        #expect(await board.waitForLog("local API listening"))
        #expect(await silent.waitUntil { $0.accepted == 1 }, "\(silent.counts)")
        board.terminate()
        #expect(await board.waitForExit() == 0)
        #expect(!board.stderr.contains("no answer to the WebSocket upgrade"), "\(board.stderr)")
        #expect(await silent.waitUntil { $0.closed == 1 }, "\(silent.counts)")
    }

    /// `flapd run` subscribed to the scripted API on `port` (pinging every `ping` seconds), fast
    /// flips, no sound, with `extra` config lines; its state folder.
    static func board(port: Int, ping: Int = 1, extra: String = "") throws -> (FlapdProcess, String) {
        let dir = try scratchDirectory("flap-bad")
        try """
            message_api: { url: "http://127.0.0.1:\(port)", token: t0ken, ping_seconds: \(ping) }
            local_api: { port: 0 }
            sound: { enabled: false }
            timing: { flip_ms: 50, column_stagger_ms: 2, row_stagger_ms: 5 }
            \(extra)
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        return (try FlapdProcess(["run", "--config", dir + "/flapd.yaml", "--plain", "--no-sound", "--state-dir", dir]), dir)
    }
}

/// A loopback TCP listener that takes every connection, reads what comes and never answers:
/// counts the connections and those their client closed.
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let state = NSCondition()
    private var accepted = 0, closed = 0

    var counts: (accepted: Int, closed: Int) { state.withLock { (accepted, closed) } }

    /// Waits (on a thread of its own, up to 120 s against a hang) until the counts satisfy `condition`.
    func waitUntil(_ condition: @escaping @Sendable ((accepted: Int, closed: Int)) -> Bool) async -> Bool {
        await withCheckedContinuation { c in
            Thread { [self] in
                let deadline = Date().addingTimeInterval(120)
                state.lock()
                var met = condition((accepted, closed))
                while !met, state.wait(until: deadline) { met = condition((accepted, closed)) }
                met = condition((accepted, closed))
                state.unlock()
                c.resume(returning: met)
            }.start()
        }
    }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let c = accept(fd, nil, nil)
                guard c >= 0 else { return }
                _ = fcntl(c, F_SETFD, FD_CLOEXEC)
                state.withLock { accepted += 1; state.broadcast() }
                Thread { [self] in
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while recv(c, &buffer, buffer.count, 0) > 0 {}
                    close(c)
                    state.withLock { closed += 1; state.broadcast() }
                }.start()
            }
        }.start()
    }

    func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}
