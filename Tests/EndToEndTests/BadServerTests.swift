import Foundation
import Testing

/// flapd against a message API that misbehaves: every bad frame is logged with what was wrong
/// and skipped, a 10 MB frame ends the connection (then reconnect), a silent server is taken
/// for dead, duplicates show once, and a message that reaches 48 h flips off — and no good
/// message is ever lost.
@Suite struct BadServerTests {
    @Test func badFramesAreSkippedAndGoodMessagesStillShow() async throws {
        let now = Date().timeIntervalSince1970
        let good = ScriptedAPI.message("g1", from: "alice", "good one")
        let fading = ScriptedAPI.message("e1", from: "old", "fading", at: now - 48 * 3600 + 15)
        let after = ScriptedAPI.message("g2", from: "bob", "after reconnect")
        let goodFrame = ScriptedAPI.new(good), afterFrame = ScriptedAPI.new(after)
        // The server's inbox once bob has sent his: what a catch-up then finds.
        let laterInbox = ScriptedAPI.inbox([["id": "bad"], fading, good, after])
        let api = ScriptedAPI(inbox: ScriptedAPI.inbox([["id": "bad"], fading, good])) { connection, api, frames, out in
            switch connection {
            case 1:
                for bad in ["not json at all", #"{"type":"message.exploded"}"#,
                            #"{"type":"message.new","message":{"id":"x","senderID":"s","senderUsername":"s","contentType":"text","timestamp":1}}"#] {
                    try await out.write(.text(bad))
                }
                try await out.write(.binary(.init(string: "\u{1}\u{2}")))
                try await out.write(.text(goodFrame))
                try await out.write(.text(goodFrame))
                try await frames.wait(for: #""messageID":"g1""#)
                try await frames.wait(for: #""messageID":"e1""#)
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
        #expect(await board.waitForLog("silent for"), "\(board.stderr)")
        #expect(await eventually { api.connections.withLock { $0 } >= 3 })
        // The message at 48 h flips off; the good ones were shown and reported once each.
        #expect(await board.waitForFrame { words($0) == ["AFTER RECONNECT"] && $0[4].contains("AFTER") }, "\(board.stdout)\n\(board.stderr)")
        #expect(api.count(#""messageID":"g1""#) == 1)
        #expect(api.count(#""messageID":"e1""#) == 1)
        #expect(api.count(#""messageID":"g2""#) == 1)
        // Three connections each logged once their catch-up is done (the third's may come after its frames).
        #expect(await board.waitUntil { _, e in e.components(separatedBy: "message API connected").count - 1 >= 3 }, "\(board.stderr)")
        let log = board.stderr
        for expected in ["frame skipped: not a JSON object: not json at all", "frame skipped: unknown type 'message.exploded'",
                         "frame skipped: message.new without a valid message: missing 'message.content'",
                         "frame skipped: a binary frame", "frame skipped: inbox message 0: missing",
                         "message duplicate", "silent for"] {
            #expect(log.contains(expected), "\(expected)")
        }
        board.terminate()
        #expect(await board.waitForExit() == 0)
        #expect(!log.contains("t0ken"))
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

    /// `flapd run` subscribed to the scripted API on `port` (pinging every second), fast
    /// flips, no sound, with `extra` config lines; its state folder.
    static func board(port: Int, extra: String = "") throws -> (FlapdProcess, String) {
        let dir = try scratchDirectory("flap-bad")
        try """
            message_api: { url: "http://127.0.0.1:\(port)", token: t0ken, ping_seconds: 1 }
            local_api: { port: 0 }
            sound: { enabled: false }
            timing: { flip_ms: 50, column_stagger_ms: 2, row_stagger_ms: 5 }
            \(extra)
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        return (try FlapdProcess(["run", "--config", dir + "/flapd.yaml", "--plain", "--no-sound", "--state-dir", dir]), dir)
    }
}
