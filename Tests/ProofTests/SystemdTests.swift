import EndToEndSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct SystemdTests {
    @Test func notifiesReadyStatusWatchdogAndStopping() async throws {
        let dir = try scratchDirectory("flap-sd")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notify = try NotifySocket(directory: dir)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0"],
                                     environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "100000"])
        // READY=1 once the local API listens (its port is in the log), with what the board shows.
        #expect(await notify.waitUntil { $0.contains("READY=1\nSTATUS=wall shows a blank board") }, "\(notify.all)")
        let port = try #require(await flapd.apiPort())
        // Idle, the conductor's loop still beats (every 50 ms for a 100 ms watchdog).
        #expect(await notify.waitUntil { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 })
        #expect(try await http("POST", port: port, body: Data(#"{"text":"hello wall"}"#.utf8)).status == 201)
        #expect(await notify.waitUntil { $0.contains("STATUS=wall shows \"HELLO WALL\"") }, "\(notify.all)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        #expect(await notify.waitUntil { $0.contains { $0.hasPrefix("STOPPING=1\n") } }, "\(notify.all.suffix(3))")
    }

    @Test func theUnitVerifiesClean() async throws {
        let unit = NotifiedDemo.unit
        let dir = try scratchDirectory("flap-unit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // ExecStart must name an executable that exists: point it at the flapd under test.
        let text = try String(contentsOf: unit, encoding: .utf8).replacingOccurrences(of: "/usr/local/bin/flapd", with: FlapdProcess.executable)
        try text.write(toFile: "\(dir)/flapd.service", atomically: true, encoding: .utf8)
        #expect(text.contains("Type=notify") && text.contains("WatchdogSec="))
        try await Self.expectVerifiesCleanAndHardened("\(dir)/flapd.service")
    }

    /// `systemd-analyze verify` says nothing of the unit, and `security --offline` scores its
    /// exposure at most 2.0 (the threshold counts on systemd's 0…100 scale: 20 is 2.0).
    static func expectVerifiesCleanAndHardened(_ unit: String) async throws {
        let verify = try FlapdProcess(["verify", unit], executable: "/usr/bin/systemd-analyze")
        #expect(await verify.waitForExit() == 0)
        #expect(verify.stderr.isEmpty && verify.stdout.isEmpty, "systemd-analyze verify: \(verify.stderr)")
        let security = try FlapdProcess(["security", "--offline=true", "--threshold=20", unit], executable: "/usr/bin/systemd-analyze")
        #expect(await security.waitForExit() == 0)
        let overall = security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        let score = overall.split(separator: " ").compactMap { Double($0) }.first
        #expect(score.map { $0 <= 2.0 } == true, "\(overall)")
    }
}

extension SystemdTests {
    /// Issue 38, item 5: flaphub's unit verifies clean and is hardened as flapd's is.
    @Test func theHubUnitVerifiesCleanAndIsHardened() async throws {
        let unit = NotifiedDemo.unit.deletingLastPathComponent().appendingPathComponent("flaphub.service")
        let dir = try scratchDirectory("flap-hub-unit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOf: unit, encoding: .utf8).replacingOccurrences(of: "/usr/local/bin/flaphub", with: HubHarness.executable)
        try text.write(toFile: "\(dir)/flaphub.service", atomically: true, encoding: .utf8)
        try await Self.expectVerifiesCleanAndHardened("\(dir)/flaphub.service")
    }

    @Test func sighupReloadsTheConfigOrRefusesABadOne() async throws {
        let dir = try scratchDirectory("flap-reload")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/flapd.yaml", trace = dir + "/trace.jsonl"
        try "timing: { flip_ms: 120 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let notify = try NotifySocket(directory: dir)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--config", config, "--trace", trace],
                                     environment: ["NOTIFY_SOCKET": notify.path])
        let port = try #require(await flapd.apiPort())
        #expect(await notify.waitUntil { $0.contains { $0.hasPrefix("READY=1") } })

        try "timing: { flip_ms: 60 }\nboards:\n  - align: { horizontal: left, vertical: top }\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        kill(flapd.pid, SIGHUP)
        #expect(await notify.waitUntil { $0.filter { $0.hasPrefix("READY=1\n") }.count == 2 }, "\(notify.all)")
        let reloading = notify.all.firstIndex { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }
        let ready = notify.all.lastIndex { $0.hasPrefix("READY=1\n") }
        #expect(reloading != nil && reloading! < ready!)

        #expect(try await http("POST", port: port, body: Data(#"{"text":"C"}"#.utf8)).status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.first?.hasPrefix("C ") == true }, "the new alignment: \(flapd.stdout)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        let planned = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["planned_ms"] as! Double
        }
        #expect(planned == [30, 90, 150], "blank → C: three flips of the new 60 ms")
    }

    @Test func aBadConfigOnReloadIsRefusedAndTheDaemonRunsOn() async throws {
        let dir = try scratchDirectory("flap-reload")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let demo = try await NotifiedDemo(in: dir, config: "timing: { flip_ms: 120 }\n")
        let (flapd, notify, port, config) = (demo.flapd, demo.notify, demo.port, demo.config)
        try "timing: { flip_ms: 20 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(flapd.pid, SIGHUP)
        #expect(await notify.waitUntil { $0.contains { $0.hasPrefix("READY=1\nSTATUS=reload refused (\(config) has problems)") } }, "\(notify.all)")
        #expect(flapd.stderr.contains("timing.flip_ms: 20 is outside 50…200 (line 1)"))
        #expect(try await http("POST", port: port, body: Data(#"{"text":"still here"}"#.utf8)).status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STILL HERE") == true })
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}

extension SystemdTests {
    /// Issue 13, bug 5: `systemctl reload flapd` succeeded for a config flapd refused — the
    /// unit's reload only sent SIGHUP. The unit's `ExecReload=` lines are run here as systemd
    /// runs them (in order, the first failure fails the reload), against a real flapd.
    @Test func aReloadOfTheUnitFailsForAConfigFlapdRefuses() async throws {
        let dir = try scratchDirectory("flap-unit-reload")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let demo = try await NotifiedDemo(in: dir, config: "timing: { flip_ms: 120 }\n")
        let (flapd, notify, config) = (demo.flapd, demo.notify, demo.config)
        let reload = try String(contentsOf: NotifiedDemo.unit, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("ExecReload=") }
            .map { line in
                line.dropFirst("ExecReload=".count)
                    .replacingOccurrences(of: "/usr/local/bin/flapd", with: FlapdProcess.executable)
                    .replacingOccurrences(of: "/etc/flapd/flapd.yaml", with: config)
                    .replacingOccurrences(of: "$MAINPID", with: "\(flapd.pid)")
                    .split(separator: " ").map(String.init)
            }
        func systemctlReload() async throws -> Int32 {
            for command in reload {
                let step = try FlapdProcess(Array(command.dropFirst()), executable: command[0])
                let status = await step.waitForExit()
                if status != 0 { return status }
            }
            return 0
        }
        try "timing: { flip_ms: 20 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try await systemctlReload() != 0, "a config flapd refuses fails the reload")
        try "timing: { flip_ms: 60 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try await systemctlReload() == 0)
        #expect(await notify.waitUntil { $0.filter { $0.hasPrefix("READY=1\n") }.count == 2 }, "\(notify.all)")
        #expect(notify.all.filter { $0.hasPrefix("RELOADING=1") }.count == 1, "the refused config never reached flapd: \(notify.all)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }

    /// Issue 13, bug 6: every start under the unit logged libdispatch's `Failed to set thread
    /// priority for worker thread … errno=13`. Dispatch gives its workers a nice value by their
    /// queue's QoS — 10, 2, 0, −2, −4 — and its event manager thread (timers, signal sources) is
    /// user-interactive, −4: below 0, which systemd's default RLIMIT_NICE of 0 forbids. flapd runs
    /// as under the unit — an unprivileged user, libdispatch's log on stderr (systemd sends it to
    /// the journal) — once with RLIMIT_NICE 0 (the message must show: the check can fail) and once
    /// with the unit's `LimitNICE=`. In a QEMU guest, where root may raise the limit (these
    /// machines' root lacks CAP_SYS_RESOURCE and cannot).
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func underTheUnitsLimitsDispatchNeverAsksForAPriorityItMayNotHave() async throws {
        // LimitNICE=+N / -N is a nice value (RLIMIT_NICE 20 − N); a bare number is the raw limit.
        let limit = try String(contentsOf: NotifiedDemo.unit, encoding: .utf8).split(separator: "\n")
            .first { $0.hasPrefix("LimitNICE=") }
            .map { line -> Int in
                let value = line.dropFirst("LimitNICE=".count)
                return value.first == "+" || value.first == "-" ? 20 - Int(value)! : Int(value)!
            } ?? 0
        let dir = try scratchDirectory("flap-nice")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let guest = try await QEMUGuest(dir: dir, script: """
            busybox ip link set lo up
            for n in 0 \(limit); do
              LIBDISPATCH_LOG=stderr /prlimit --nice=$n:$n /setpriv --reuid=65534 --regid=65534 --clear-groups \\
                /flapd demo --plain --no-sound --port 0 --once HELLO >/tmp/out 2>&1
              echo "NICE-LIMIT $n EXIT $? FAILED $(busybox grep -c 'Failed to set thread priority' /tmp/out)"
            done
            """, files: [FlapdProcess.executable, "/usr/bin/prlimit", "/usr/bin/setpriv"])
        let qemu = try guest.boot(memoryMB: 1024)
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stdout)\n\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        #expect(console.contains("NICE-LIMIT 0 EXIT 0 FAILED 1"), "the default limit shows the message: \(qemu.stdout)")
        #expect(console.contains("NICE-LIMIT \(limit) EXIT 0 FAILED 0"), "LimitNICE=: RLIMIT_NICE \(limit): \(qemu.stdout)")
    }

    @Test func journalLinesCarryPrioritiesAndNoSecrets() async throws {
        let secret = "s3cr3t-\(UUID().uuidString)"
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--log-format", "journal"],
                                     environment: ["FLAPD_LOCAL_API_KEY": secret])
        let port = try #require(await flapd.apiPort())
        #expect(try await http("POST", port: port, body: Data(#"{"text":"x"}"#.utf8), key: "wrong").status == 401)
        #expect(try await http("POST", port: port, body: Data(#"{"text":"hi"}"#.utf8), key: secret).status == 201)
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        let lines = flapd.stderr.split(separator: "\n")
        #expect(lines.count >= 3)
        #expect(lines.allSatisfy { $0.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<5>local API listening") })
        #expect(!flapd.stderr.contains(secret), "the key is never logged")
    }
}

extension SystemdTests {
    @Test func installPutsEverythingInPlaceAndUninstallKeepsTheConfig() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flap-root-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/install").path
        let env = ["DESTDIR": root, "FLAPD_BINARY": FlapdProcess.executable]
        let install = try FlapdProcess([script], environment: env, executable: "/bin/bash")
        #expect(await install.waitForExit() == 0, "\(install.stderr)")
        let files = ["/usr/local/bin/flapd", "/etc/systemd/system/flapd.service", "/usr/lib/sysusers.d/flapd.conf", "/etc/flapd/flapd.yaml"]
        for f in files { #expect(FileManager.default.fileExists(atPath: root + f), "\(f)") }
        #expect(FileManager.default.isExecutableFile(atPath: root + "/usr/local/bin/flapd"))

        // An edited config survives a second install and an uninstall.
        let config = root + "/etc/flapd/flapd.yaml"
        try "boards:\n  - id: mine\n".write(toFile: config, atomically: true, encoding: .utf8)
        let again = try FlapdProcess([script], environment: env, executable: "/bin/bash")
        #expect(await again.waitForExit() == 0)
        #expect(again.stdout.contains("kept your /etc/flapd/flapd.yaml"))
        let uninstall = try FlapdProcess([script, "--uninstall"], environment: env, executable: "/bin/bash")
        #expect(await uninstall.waitForExit() == 0)
        for f in files.dropLast() { #expect(!FileManager.default.fileExists(atPath: root + f), "\(f) removed") }
        #expect(try String(contentsOfFile: config, encoding: .utf8) == "boards:\n  - id: mine\n")
    }
}

extension SystemdTests {
    @Test func statusAndMetricsSayHowItIs() async throws {
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0"])
        let port = try #require(await flapd.apiPort())
        #expect(try await http("POST", port: port, body: Data(#"{"text":"status check"}"#.utf8)).status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STATUS CHECK") == true })

        let status = try FlapdProcess(["status", "--url", "http://127.0.0.1:\(port)"])
        #expect(await status.waitForExit() == 0, "\(status.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let board = try #require((json["boards"] as? [[String: Any]])?.first)
        #expect((board["shows"] as? [String])?[2].contains("STATUS CHECK") == true)
        #expect(board["moving"] as? Bool == false)
        #expect((board["modules"] as? [String: Int])?["ok"] == 132)
        let conductor = try #require(json["conductor"] as? [String: Any])
        #expect((conductor["flips"] as? Int ?? 0) > 0)
        #expect((json["versions"] as? [String: String])?["flapd"] != nil)
        #expect((json["message_api"] as? [String: Bool])?["connected"] == false)

        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        request.httpMethod = "GET"
        let (data, _) = try await URLSession.shared.data(for: request)
        let metrics = String(decoding: data, as: UTF8.self)
        #expect(metrics.contains("flapd_flips_total \(conductor["flips"]!)"))
        #expect(metrics.contains("flapd_lateness_microseconds{quantile=\"0.99\"}"))
        #expect(metrics.contains("flapd_board_moving{board=\"wall\"} 0"))
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}
