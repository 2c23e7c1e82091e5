@testable import FlapConfig
import FlapCore
@testable import FlapMessages
import Foundation
import Logging
import Testing
@testable import FlapDaemon

/// Issue 13, item 5: a reload in-process — `Daemon.reload` on a wall and mailroom whose
/// conductor is not started: what may change applies, what may not is named by its kind, and no
/// message is lost.
extension MailroomTests {
    @Test func aReloadReroutesKeepsEveryMessageAndRefusesWhatNeedsARestart() async throws {
        let clock = Clock()
        let (mailroom, wall, _, logged) = try mailroom(Self.config, clock: clock)
        let config = try ConfigLoader.parse(Self.config)
        let daemon = Daemon(config: config, options: .init(), logger: Logger(label: "test") { _ in logged })
        let file = NSTemporaryDirectory() + "reload-\(UUID().uuidString).yaml"
        func reload(_ yaml: String) async throws {
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            await daemon.reload(wall, mailroom: mailroom, schedule: nil, from: file, systemd: nil, status: nil)
        }
        await mailroom.take(.new(InboxMessage(id: "a1", senderID: "alice", senderName: "alice", content: "ALICE", sentAt: clock.now)))
        #expect(rows(wall) == ["", "ALICE", "", "", "", ""])

        // Alice moves to the bottom half: her message follows, nothing is lost.
        try await reload("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones:
              - { board: wall, rows: [3, 5], senders: [alice] }
              - { board: wall, rows: [0, 2], senders: "*" }
            """)
        #expect(rows(wall) == ["", "", "", "", "ALICE", ""])
        #expect(mailroom.inbox.live["alice"]?.id == "a1")

        // Another list of boards: nothing of the new file applies, and the log says why.
        try await reload("""
            boards: [{ id: wall }, { id: hall }]
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones: [{ board: hall, senders: [alice] }]
            """)
        #expect(rows(wall) == ["", "", "", "", "ALICE", ""], "zones of the refused board list stay as they were")
        #expect(logged.lines.contains { $0.contains("reload: the list of boards changed") })

        // A file with a problem is refused whole.
        try await reload("zones: [{ board: nowhere }]")
        #expect(logged.lines.contains { $0.contains("reload refused, the running config stays") })
        #expect(rows(wall) == ["", "", "", "", "ALICE", ""])

        // A new port needs a restart: named, and the rest applies (the local sender moves to a zone).
        try await reload("""
            local_api: { port: 7999 }
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones:
              - { board: wall, rows: [3, 5], senders: [alice] }
              - { board: wall, rows: [0, 0], senders: ["@local"] }
            """)
        #expect(logged.lines.contains { $0.contains("reload: local_api changes only with a restart") })
        _ = await mailroom.post("LOCAL", type: .text)
        #expect(rows(wall) == ["LOCAL", "", "", "", "ALICE", ""])
        #expect(wall.apply(try ConfigLoader.parse("boards: [{ id: other }]")) == [.boardList(from: ["wall"], to: ["other"])])
    }
}
