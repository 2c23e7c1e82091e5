@testable import FlapConfig
import FlapCore
@testable import FlapMessages
import Foundation
import Testing
@testable import FlapDaemon

/// The problems `check-config` would name in a config, one line each.
func issues(_ yaml: String, env: [String: String] = [:]) -> [String] {
    do {
        _ = try ConfigLoader.parse(yaml, environment: env)
        return []
    } catch {
        return error.issues.map(\.description)
    }
}

@Suite struct ConfigTests {
    @Test func aFullConfig() throws {
        let c = try ConfigLoader.parse("""
            timing:
              flip_ms: 100
            motion: forward
            realtime: { priority: 50, lock_memory: true, wake_latency_us: 0, spin_us: 200 }
            local_api: { bind: 0.0.0.0, port: 7001, key: s3cret, board: kitchen }
            boards:
              - id: wall
                drum: splitflap52
              - id: kitchen
                rows: 3
                cols: 15
                drum: " ABCDEFGHIJKLMNOPQRSTUVWXYZ{63}"
                motion: shortest
                timing: { column_stagger_ms: 30 }
                align: { horizontal: left, vertical: top }
                substitutions: { "!": "{63}" }
                fallback: "Z"
            """)
        #expect(c.boards.count == 2)
        #expect(c.boards[0].drum == .splitflap52)
        #expect(c.boards[0].timing.flip == 100_000_000, "global timing applies to boards")
        #expect(c.boards[1].timing == FlipTiming(flipMs: 100, columnStaggerMs: 30, rowStaggerMs: 50))
        #expect(c.boards[1].motion == .shortest)
        #expect(c.boards[1].drum.count == 28)
        #expect(c.boards[1].substitutes["!"] == Glyph(code: 63))
        #expect(c.boards[1].fallback.text == "Z")
        #expect(c.boards[1].layout.horizontal == .left)
        #expect(c.localAPI.port == 7001 && c.localAPI.key == "s3cret")
        #expect(c.localBoardIndex == 1)
        #expect(c.realtime.priority == 50 && c.realtime.lockMemory && c.realtime.wakeLatencyMicros == 0)
        #expect(c.realtime.spinMicros == 200)
        #expect(try ConfigLoader.parse("").realtime.spinMicros == 500, "a SCHED_FIFO conductor lands by spinning unless told not to")
        #expect(issues("realtime: { spin_us: 9000 }") == ["realtime.spin_us: 9000 is outside 0…5000 (line 1)"])
    }

    @Test func scalarsReadAsYAMLHasThem() throws {
        let c = try ConfigLoader.parse("""
            realtime: { priority: +5, lock_memory: yes, spin_us: 1_000, wake_latency_us: ~ }
            local_api: { enabled: Off, port: null }
            """)
        #expect(c.realtime.priority == 5 && c.realtime.lockMemory && c.realtime.spinMicros == 1000)
        #expect(c.realtime.wakeLatencyMicros == nil && !c.localAPI.enabled && c.localAPI.port == 7000)
        #expect(issues("realtime: { priority: \"5\", lock_memory: \"true\" }") == [
            "realtime.priority: '5' is not a whole number (line 1)",
            "realtime.lock_memory: 'true' is not true or false (line 1)",
        ], "quoted, a scalar is text")
    }

    @Test func emptyFileIsTheDemoDefault() throws {
        let c = try ConfigLoader.parse("")
        #expect(c.boards.count == 1 && c.boards[0].rows == 6 && c.boards[0].cols == 22)
        #expect(c.boards[0].drum == .extended, "a virtual board shows every Vestaboard glyph")
        #expect(c.localAPI.port == 7000 && c.localAPI.bind == "127.0.0.1" && c.localAPI.key == nil)
    }

    @Test func outOfRangeNamesKeyValueRangeAndLine() {
        let found = issues("""
            boards:
              - id: wall
                timing:
                  flip_ms: 20
            """)
        #expect(found == ["boards[0].timing.flip_ms: 20 is outside 50…200 (line 4)"])
    }

    @Test func everyProblemIsReported() {
        let found = issues("""
            motion: sideways
            local_api: { port: 99999, board: nowhere }
            boards:
              - id: a
                rows: 0
                drum: " AA"
                output: hdmi
                flip_ms: 100
              - id: a
                fallback: "{63}"
                substitutions: { "ab": "C" }
                drum: standard
            """)
        let expected = [
            "motion: 'sideways' is not one of forward, shortest (line 1)",
            "local_api.port: 99999 is outside 0…65535 (line 2)",
            "boards[0].rows: 0 is outside 1…128 (line 5)",
            "boards[0].output: 'hdmi' is not one of virtual, splitflap, flapbus, krone, omega, gpio (line 7)",
            "boards[0].drum: the flap 'A' appears twice",
            "boards[0].flip_ms: unknown key",
            "boards[1].fallback: '{63}' is not on the board's drum (line 10)",
            "boards[1].substitutions.ab: a substitution replaces one character or {NN} code (line 11)",
            "boards[1].id: 'a' is used by another board (line 9)",
            "local_api.board: 'nowhere' is not a board",
        ]
        for e in expected { #expect(found.contains { $0.hasPrefix(e) }, "missing: \(e)\nin: \(found)") }
        #expect(found.count == expected.count, "\(found)")
    }

    /// Issue 12: a board its protocol cannot carry is refused, the limit named (a 264-module
    /// splitflap board was accepted, and every frame failed to decode on the display).
    @Test func aSplitflapBoardPastTheProtocolsLimitIsRefused() {
        let found = issues("""
            boards:
              - { id: big, rows: 12, cols: 22, output: splitflap, serial: { port: /dev/ttyACM0 } }
              - { id: ok, rows: 15, cols: 17, output: splitflap, serial: { port: /dev/ttyACM1 } }
            """)
        #expect(found == ["boards[0].output: a splitflap display takes at most 255 modules (its protocol's limit); this board has 264 (12 × 22) (line 2)"], "\(found)")
    }

    @Test func stationModulesTakeTheirBusDefaultsAndAddresses() throws {
        let c = try ConfigLoader.parse("""
            boards:
              - { id: a, rows: 1, cols: 3, output: krone, serial: { port: /dev/ttyUSB0, first_address: 20 } }
              - { id: b, rows: 1, cols: 2, output: omega, serial: { port: /dev/ttyUSB1, addresses: [9, 4] } }
            """)
        #expect(c.boards[0].serial?.settings == .init(baud: 4800, parity: .even) && c.boards[0].serial?.addresses == [20, 21, 22])
        #expect(c.boards[1].serial?.settings == .init(baud: 19_200) && c.boards[1].serial?.addresses == [9, 4])
        let found = issues("""
            boards:
              - { id: a, rows: 1, cols: 3, output: krone, serial: { port: /dev/ttyUSB0, addresses: [1, 2] } }
              - { id: b, rows: 1, cols: 2, output: omega, serial: { port: /dev/ttyUSB1, addresses: [5, 5] } }
              - { id: c, rows: 2, cols: 2, output: omega, serial: { port: /dev/ttyUSB2, first_address: 254 } }
            """)
        #expect(found == [
            "boards[0].serial.addresses: expected 3 addresses (one per module, row by row), each 0–255 (line 2)",
            "boards[1].serial.addresses: two modules share an address (line 3)",
            "boards[2].serial.first_address: 4 modules from address 254 run past 255; list them in addresses (line 4)",
        ], "\(found)")
    }

    @Test func gpioBoardsAndPowerGroups() throws {
        let c = try ConfigLoader.parse("""
            boards:
              - id: a
                rows: 1
                cols: 2
                output: gpio
                gpio: { kind: step_dir, step: [17, 27], dir: 24, enable: [25, 26], steps_per_revolution: 400 }
                power_groups: [{ cols: [0, 1], max_moving: 1 }]
            """)
        let g = try #require(c.boards[0].gpio)
        #expect(g.wiring.lines == [17, 27, 24, 25, 26] && g.wiring.chip == "gpiochip0" && g.geometry == StepGeometry(stepsPerRevolution: 400, flaps: 40))
        #expect(c.boards[0].timing.powerGroups == [PowerGroup(rows: 0...0, cols: 0...1, maxMoving: 1)])
        let found = issues("""
            boards:
              - { id: a, rows: 1, cols: 2, output: gpio, gpio: { kind: unipolar, coils: [[1, 2, 3, 4]] } }
              - { id: b, rows: 1, cols: 2, output: gpio, gpio: { kind: step_dir, step: [1, 1], steps_per_revolution: 20 } }
              - { id: c, rows: 1, cols: 2, output: gpio, gpio: { kind: shift_chain, data: 1, clock: 2, latch: 3, chain_order: [0, 0] } }
              - { id: d, rows: 1, cols: 2, output: gpio }
              - { id: e, rows: 1, cols: 2, gpio: { kind: unipolar }, power_groups: [{ rows: [0, 3] }] }
              - { id: f, rows: 1, cols: 1, output: gpio, timing: { flip_ms: 50 }, gpio: { kind: step_dir, step: [4], steps_per_revolution: 4000, pulse_us: 1000 } }
            """)
        #expect(found == [
            "boards[0].gpio.coils: expected 2 lists of four coil lines [IN1, IN2, IN3, IN4], one a module, row by row (line 2)",
            "boards[1].gpio.steps_per_revolution: 20 steps cannot turn a drum of 40 flaps (at least one step a flap) (line 3)",
            "boards[1].gpio: a line is used twice (each STEP, coil, DATA, CLOCK, LATCH line is one module's or role's own) (line 3)",
            "boards[2].gpio.chain_order: expected every module 0…1 once, in chain order from the Pi (line 4)",
            "boards[3].gpio: missing (output: gpio needs a gpio block: chip, kind and its lines)",
            "boards[4].gpio: only output: gpio has gpio lines (line 6)",
            "boards[4].power_groups[0].rows: [0, 3] is outside board 'e' (rows 0…0) (line 6)",
            "boards[4].power_groups[0].max_moving: missing (how many modules may turn at once) (line 6)",
            "boards[5].gpio.pulse_us: 1000 µs pulses do not fit steps 500 µs apart (at most half of it) (line 7)",
        ], "\(found)")
    }

    @Test func soundSettings() throws {
        let c = try ConfigLoader.parse("""
            sound:
              device: "hw:1,0"
              volume_percent: 50
              quiet_hours: { from: "22:30", to: "06:45" }
              clack: { duration_ms: 60, thump_hz: 100 }
            """)
        #expect(c.sound.enabled && c.sound.player.device == "hw:1,0" && c.sound.player.volume == 0.5)
        #expect(c.sound.player.quiet == DailySpan(from: 22 * 60 + 30, to: 6 * 60 + 45))
        #expect(c.sound.player.model.durationMs == 60 && c.sound.player.model.thump.hz == 100)
        let found = issues("""
            sound:
              quiet_hours: { from: "25:00" }
              buffer_ms: 10
              period_ms: 8
              clack: { duration_ms: 200 }
            """)
        #expect(found.contains("sound.quiet_hours.from: '25:00' is not a time of day HH:MM (line 2)"), "\(found)")
        #expect(found.contains { $0.hasPrefix("sound.quiet_hours.to: missing") })
        #expect(found.contains("sound.period_ms: 8 ms must be at most half of buffer_ms (10 ms) (line 4)"))
        #expect(found.contains("sound.clack.duration_ms: 200 is outside 50…100 (line 5)"))
    }

    @Test func yamlSyntaxErrorsNameTheLine() {
        let found = issues("boards:\n  - id: [unclosed\n")
        #expect(found.count == 1)
        #expect(found[0].contains("not valid YAML") && found[0].contains("(line"))
    }

    @Test func secretsFromTheEnvironment() throws {
        let fromVariable = try ConfigLoader.parse("local_api: { key_env: MY_KEY }", environment: ["MY_KEY": "k1"])
        #expect(fromVariable.localAPI.key == "k1")
        let overridden = try ConfigLoader.parse("local_api: { key: inline }", environment: ["FLAPD_LOCAL_API_KEY": "k2"])
        #expect(overridden.localAPI.key == "k2")
        #expect(issues("local_api: { key_env: MISSING }") == ["local_api.key_env: the environment variable MISSING is not set (line 1)"])
    }
}

@Suite struct ExampleConfigTests {
    /// Every example config under hardware/examples is valid, so the docs stay true.
    @Test func examplesAreValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("hardware/examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yaml") }
        #expect(files.count >= 3)
        for file in files {
            #expect(throws: Never.self, "\(file)") { _ = try ConfigLoader.load(file: dir.appendingPathComponent(file).path, environment: ["WALL_TOKEN": "example"]) }
        }
    }
}

@Suite struct MessageConfigTests {
    @Test func zonesAndTheMessageAPI() throws {
        let c = try ConfigLoader.parse("""
            message_api: { url: "https://hub.example.org", token_env: HUB_TOKEN, ping_seconds: 10 }
            boards:
              - id: hall
              - id: kitchen
                rows: 3
            zones:
              - board: hall
                rows: [0, 2]
                senders: [alice, bob]
                name_line: true
                rotate_seconds: 30
                align: { horizontal: left }
              - board: hall
                rows: [3, 5]
                senders: "*"
              - board: kitchen
                senders: [alice]
            """, environment: ["HUB_TOKEN": "tok"])
        #expect(c.messageAPI?.token == "tok")
        #expect(c.messageAPI?.pingSeconds == 10)
        #expect(c.zones.count == 3)
        #expect(c.zones[0] == Zone(board: 0, rows: 0..<3, cols: 0..<22, senders: .listed(["alice", "bob"]),
                                   layout: Layout(horizontal: .left), nameLine: true, rotateSeconds: 30))
        #expect(c.zones[1].senders == .everyoneElse && c.zones[1].rows == 3..<6)
        #expect(c.zones[2].board == 1 && c.zones[2].rows == 0..<3)
    }

    @Test func withoutZonesEveryoneGoesToTheFirstBoard() throws {
        let c = try ConfigLoader.parse("message_api: { url: \"http://127.0.0.1:8080\", token: t }")
        #expect(c.zones == [Zone(board: 0, rows: 0..<6, cols: 0..<22, senders: .everyoneElse)])
        #expect(try ConfigLoader.parse("").zones.isEmpty)
        // The environment variable overrides the file's token.
        #expect(try ConfigLoader.parse("message_api: { url: \"http://h\", token: t }",
                                       environment: ["FLAPD_MESSAGE_API_TOKEN": "e"]).messageAPI?.token == "e")
    }

    @Test func badZonesAreNamedByKeyPath() {
        let problems = issues("""
            message_api: { url: "ws://nope" }
            boards: [{ id: hall }]
            zones:
              - { board: attic, senders: "*" }
              - { rows: [0, 6], senders: [a] }
              - { rows: [0, 2], cols: [5, 1], senders: [a] }
              - { rows: [0, 2], senders: [a] }
              - { rows: [2, 3], cols: [20, 21], senders: [b] }
              - { rows: [5, 5], senders: 7 }
            """)
        let expected = [
            "message_api.url: 'ws://nope' is not an http:// or https:// URL (line 1)",
            "message_api.token: missing",
            "zones[0].board: 'attic' is not a board or grid (boards: hall) (line 4)",
            "zones[1].rows: [0, 6] is outside board 'hall' (rows 0…5) (line 5)",
            "zones[2].cols: [5, 1] is outside board 'hall' (columns 0…21) (line 6)",
            "zones[4]: overlaps zone rows 0…2, columns 0…21 of board 'hall' (line 8)",
            "zones[5].senders: expected \"*\" or a list of sender ids or usernames (line 9)",
        ]
        for e in expected { #expect(problems.contains { $0.hasPrefix(e) }, "\(e) not in \(problems)") }
        #expect(problems.count == expected.count, "\(problems)")
    }

    @Test func aTokenFileMustBeTheOwnersAlone() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)").path
        try "secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let yaml = "message_api: { url: \"http://h\", token_file: \(path) }"
        #expect(issues(yaml).contains { $0.contains("readable by others (mode 644): chmod 600 it") })
        chmod(path, 0o600)
        #expect(try ConfigLoader.parse(yaml).messageAPI?.token == "secret")
    }
}
