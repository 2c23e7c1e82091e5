import EndToEndSupport
import Foundation
import Testing

/// The aarch64 build of `packaging/build-arm64`, if there is one: the binary, and the trixie
/// arm64 sysroot qemu-user takes its loader and libraries from.
enum Arm64Build {
    static let binary: String? = {
        let path = QEMUGuest.repository.path + "/.build-arm64/flapd"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    static let sysroot: String? = (try? String(contentsOfFile: QEMUGuest.repository.path + "/.build-arm64/sysroot", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines)

    static let qemu = "/usr/bin/qemu-aarch64-static"

    /// Runs the aarch64 flapd under qemu-user.
    static func run(_ arguments: [String]) throws -> FlapdProcess {
        try FlapdProcess(["-L", sysroot ?? "/"] + [binary ?? "flapd"] + arguments, executable: qemu)
    }
}

/// Issue 14, item 3: the aarch64 build, run under qemu-user, plans every transition exactly as
/// the x86_64 build does — byte for byte, over several boards and messages — and plays a demo.
@Suite(.enabled(if: Arm64Build.binary != nil && FileManager.default.isExecutableFile(atPath: Arm64Build.qemu),
                "no aarch64 build here: `sudo packaging/build-arm64` makes one (.build-arm64/flapd), and qemu-user-static runs it"))
struct Arm64Tests {
    /// Boards that differ in every way the planner cares about.
    static let configs: [(name: String, yaml: String?)] = [
        ("default", nil),
        ("extended-shortest", "boards: [{ id: wall, rows: 4, cols: 16, drum: extended, motion: shortest }]\n"),
        ("note-splitflap40", "timing: { flip_ms: 80, column_stagger_ms: 35, row_stagger_ms: 0 }\nboards: [{ id: note, rows: 3, cols: 15, drum: splitflap40, align: { horizontal: right, vertical: bottom } }]\n"),
        ("big", "boards: [{ id: big, rows: 12, cols: 40, substitutions: { \"&\": \"+\" }, fallback: \"?\" }]\n"),
    ]

    static let transitions: [(from: String, to: String)] = [
        ("", "HELLO"),
        ("", "Hello, {63} world"),
        ("GOOD MORNING", "GOOD NIGHT\nSLEEP WELL"),
        ("", "Grüße & “quotes” — 12:45 PM"),
        ("ZZZZ", "AAAA"),
        ("", String(repeating: "LONG LINE OF TEXT ", count: 20)),
    ]

    @Test(arguments: configs.indices)
    func theAarch64BuildPlansByteForByteAsTheX86Build(config: Int) async throws {
        let dir = try scratchDirectory("flap-arm64")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configArguments: [String] = []
        if let yaml = Self.configs[config].yaml {
            try yaml.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
            configArguments = ["--config", dir + "/flapd.yaml"]
        }
        for t in Self.transitions {
            let arguments = ["plan", "--from", t.from, "--to", t.to] + configArguments
            let x86 = try FlapdProcess(arguments)
            let arm = try Arm64Build.run(arguments)
            let (x86Status, armStatus) = (await x86.waitForExit(), await arm.waitForSlowExit())
            #expect(x86Status == 0 && armStatus == 0, "\(Self.configs[config].name) \(t): \(arm.stderr)")
            #expect(!x86.stdout.isEmpty)
            #expect(arm.stdout == x86.stdout, "\(Self.configs[config].name) \(t): the plans differ")
            #expect(arm.stderr == x86.stderr, "\(Self.configs[config].name) \(t): the warnings differ")
        }
    }

    @Test func theAarch64BuildPlaysADemo() async throws {
        let demo = try Arm64Build.run(["demo", "--plain", "--no-sound", "--once", "HELLO PI"])
        #expect(await demo.waitForSlowExit() == 0, "\(demo.stderr)")
        let last = try #require(frames(in: demo.stdout).last, "\(demo.stdout)")
        #expect(last.contains { $0.contains("HELLO PI") }, "\(last)")
    }

    /// libmosquitto's structures read right on aarch64: the bridge announces itself, takes a
    /// command from the broker and says what the board shows.
    @Test func theAarch64BuildTalksMQTT() async throws {
        let dir = try scratchDirectory("flap-arm64-mqtt")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try await MQTTBroker(dir: dir)
        defer { broker.stop() }
        try "local_api: { port: 0 }\nmqtt: { host: 127.0.0.1, port: \(broker.port), node_id: hall }\n".write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let flapd = try Arm64Build.run(["demo", "--config", dir + "/flapd.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let watch = try MQTTWatch(port: broker.port)
        defer { watch.stop() }
        #expect(await watch.process.waitUntil(within: 600) { o, _ in MQTTTests.announced(MQTTWatch.parse(o)) }, "\(watch.seen) \(flapd.stderr)")
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", "HELLO PI") == 0)
        #expect(await watch.process.waitUntil(within: 600) { o, _ in
            MQTTWatch.parse(o).contains { $0.topic == "flapd/hall/wall/state" && $0.json?["text"] as? String == "HELLO PI" }
        }, "\(watch.seen.suffix(3)) \(flapd.stderr)")
    }
}
