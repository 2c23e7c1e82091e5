import Foundation
import Testing

/// flapd against a real kernel GPIO driver: the kernel's gpio-sim (built out of tree by
/// `hardware/sim/build-gpio-sim`) in a QEMU guest. For each module kind flapd plays one
/// transition on the simulated chip while the kernel's own `gpio_value` trace events record
/// every line write (none can be missed, however loaded the machine); the recording is read
/// here and checked against `flapd plan` with step arithmetic of its own.
@Suite struct GPIOHILTests {
    /// One kind's board: two modules in a row on a 16-line simulated chip.
    struct Case {
        let name: String, text: String, stepsPerRevolution: Int, yaml: String
        var lines: [Int]
    }

    static let cases = [
        Case(name: "step_dir", text: "CA", stepsPerRevolution: 80, yaml: """
            timing: { flip_ms: 200, column_stagger_ms: 50 }
            gpio: { chip: gpiochip0, kind: step_dir, step: [0, 1], dir: 2, enable: 3, steps_per_revolution: 80, pulse_us: 20000 }
            """, lines: [0, 1, 2, 3]),
        Case(name: "unipolar", text: "BC", stepsPerRevolution: 80, yaml: """
            timing: { flip_ms: 200, column_stagger_ms: 50 }
            gpio: { chip: gpiochip0, kind: unipolar, coils: [[4, 5, 6, 7], [8, 9, 10, 11]], half_step: true, steps_per_revolution: 80 }
            """, lines: Array(4...11)),
        Case(name: "shift_chain", text: "AB", stepsPerRevolution: 40, yaml: """
            timing: { flip_ms: 200, column_stagger_ms: 50 }
            gpio: { chip: gpiochip0, kind: shift_chain, data: 12, clock: 13, latch: 14, chain_order: [1, 0], steps_per_revolution: 40 }
            """, lines: [12, 13, 14]),
        Case(name: "max7219", text: "AB", stepsPerRevolution: 0, yaml: """
            timing: { flip_ms: 200, column_stagger_ms: 50 }
            gpio: { chip: gpiochip0, kind: max7219, din: 0, clk: 1, cs: 2, chain_order: [1, 0], intensity: 9 }
            """, lines: [0, 1, 2]),
    ]

    static func config(_ c: Case) -> String {
        """
        local_api: { enabled: false }
        sound: { enabled: false }
        boards:
          - id: sim
            rows: 1
            cols: 2
            output: gpio
        \(c.yaml.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        """
    }

    @Test(.timeLimit(.minutes(30)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func flapdDrivesEachModuleKindOnTheKernelsGPIOSimulator() async throws {
        let dir = try scratchDirectory("flap-gpio-hil")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let modules = try await QEMUGuest.gpioSimModules(into: dir)
        var files = [FlapdProcess.executable, QEMUGuest.sibling("flapgpio")] + modules
        var script = Self.setup + """
            echo 1 > $T/events/gpio/gpio_value/enable

            """
        for c in Self.cases {
            try Self.config(c).write(toFile: "\(dir)/\(c.name).yaml", atomically: true, encoding: .utf8)
            files.append("\(dir)/\(c.name).yaml")
            script += """
                echo > $T/trace
                /flapd demo --config /\(c.name).yaml --plain --no-sound --once "\(c.text)" 2>&1
                echo "FLAPD-EXIT \(c.name) $?"
                echo "RECORD-BEGIN \(c.name) base $base"; grep gpio_value $T/trace; echo "RECORD-END \(c.name)"

                """
        }
        let guest = try await QEMUGuest(dir: dir, script: script, files: files)
        let qemu = try guest.boot()
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)

        for c in Self.cases {
            #expect(console.contains("FLAPD-EXIT \(c.name) 0"), "\(qemu.stdout)")
            guard let begin = console.firstIndex(where: { $0.hasPrefix("RECORD-BEGIN \(c.name) ") }), let end = console.firstIndex(of: "RECORD-END \(c.name)") else {
                Issue.record("no recording of \(c.name): \(qemu.stdout)"); continue
            }
            let base = Int(console[begin].split(separator: " ").last ?? "") ?? 0
            let states = Self.writes(console[(begin + 1)..<end], base: base, lines: c.lines)
            let plan = try FlapdProcess(["plan", "--to", c.text, "--config", "\(dir)/\(c.name).yaml"])
            #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
            let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["modules"] as? [[String: Any]])
            let steps = (0..<2).map { col in c.stepsPerRevolution == 0 ? 0 : expectedSteps(planned.first { $0["col"] as? Int == col }, stepsPerRevolution: c.stepsPerRevolution) }
            let firstMover = planned.min { ($0["start_ms"] as! Double) < ($1["start_ms"] as! Double) }!["col"] as! Int
            switch c.name {
            case "step_dir": checkStepDir(states, steps: steps, firstMover: firstMover)
            case "unipolar": checkCoils(states.map { [Array($0[0..<4]), Array($0[4..<8])] }, steps: steps, sequence: Self.halfStep, firstMover: firstMover)
            case "max7219": checkMAX7219(states)
            default: checkCoils(latched595(states), steps: steps, sequence: Self.fullStep, firstMover: firstMover)
            }
        }
    }

    /// Home sensors driven by simulated edges: `flapgpio drum` follows the STEP line's writes in
    /// the kernel's trace and pulls the sensor line down while the drum is at its magnet (up
    /// otherwise). flapd homes at
    /// start, with the offset `flapd calibrate` saved, and ends where the message says; with a
    /// dead sensor it finds no pulse, tries again, and leaves the module faulty.
    @Test(.timeLimit(.minutes(30)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func homingFindsTheMagnetAndADeadSensorLeavesTheModuleFaulty() async throws {
        let dir = try scratchDirectory("flap-gpio-home")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let modules = try await QEMUGuest.gpioSimModules(into: dir)
        // 80 steps a turn on 40 flaps, 100 ms flips: a step every 50 ms. The drum follows the
        // kernel's trace, so it counts every step; its sensor answers within the step.
        try """
            local_api: { port: 7000 }
            sound: { enabled: false }
            boards:
              - id: sim
                rows: 1
                cols: 1
                output: gpio
                timing: { flip_ms: 100 }
                gpio:
                  chip: gpiochip0
                  kind: step_dir
                  step: [0]
                  steps_per_revolution: 80
                  pulse_us: 20000
                  home: { lines: [4], bias: pull_up, max_failures: 2 }
            """.write(toFile: dir + "/home.yaml", atomically: true, encoding: .utf8)
        try """
            local_api: { enabled: false }
            sound: { enabled: false }
            boards:
              - { id: sim, rows: 1, cols: 1, output: gpio, gpio: { chip: gpiochip0, kind: step_dir, step: [99] } }
            """.write(toFile: dir + "/badline.yaml", atomically: true, encoding: .utf8)
        let drum = "/flapgpio drum --base $base --sim $sim --step-line 0 --sensor-line 4 --steps 80 --magnet 0 --start 30"
        let guest = try await QEMUGuest(dir: dir, script: Self.setup + """
            echo 1 > $T/events/gpio/gpio_value/enable
            mkdir -p /tmp/state /tmp/state2
            /flapgpio bench --chip $chip --lines 0 --hold > /tmp/held &
            h=$!
            until grep -q HELD /tmp/held; do :; done
            /flapd demo --config /home.yaml --plain --no-sound --once C 2>&1
            echo "FLAPD-EXIT busy $?"
            kill $h; wait $h
            /flapd calibrate --config /home.yaml --module 0,0 --offset 6 --state-dir /tmp/state
            echo > $T/trace
            \(drum) > /tmp/drum1 &
            d=$!
            /flapd demo --config /home.yaml --state-dir /tmp/state --plain --no-sound --once C 2>&1
            echo "FLAPD-EXIT homed $?"
            echo END > $T/trace_marker; wait $d; cat /tmp/drum1
            /flapd demo --config /badline.yaml --plain --no-sound --once C 2>&1
            echo "FLAPD-EXIT badline $?"
            ip link set lo up
            echo > $T/trace
            \(drum) --dead > /tmp/drum2 &
            d=$!
            /flapd run --config /home.yaml --state-dir /tmp/state2 --plain --no-sound > /tmp/flapd2.log 2>&1 &
            f=$!
            until grep -q "left still" /tmp/flapd2.log; do :; done
            echo "STATUS $(/flapd status --url http://127.0.0.1:7000 | tr -d '\n')"
            kill $f; wait $f
            echo "FLAPD-EXIT dead $?"
            cat /tmp/flapd2.log
            echo END > $T/trace_marker; wait $d; cat /tmp/drum2
            """, files: [FlapdProcess.executable, QEMUGuest.sibling("flapgpio"), dir + "/home.yaml", dir + "/badline.yaml"] + modules)
        let qemu = try guest.boot()
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        let drums = try console.filter { $0.hasPrefix("DRUM {") }.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.dropFirst(5).utf8)) as? [String: Int])
        }
        #expect(console.contains("FLAPD-EXIT homed 0") && console.contains("FLAPD-EXIT dead 0") && drums.count == 2, "\(qemu.stdout)")
        // Line 0 held by another program: flapd names it and does not start.
        #expect(console.contains("FLAPD-EXIT busy 1"), "\(qemu.stdout)")
        #expect(console.contains { $0.contains("board 'sim': a line of gpiochip0 among [0] is busy: another program (or a kernel driver) holds it") }, "\(qemu.stdout)")
        guard drums.count == 2 else { return }
        // From step 30: 50 steps to the magnet, 6 on to flap 0 (the calibrated offset), 6 more
        // to C (flap 3, boundary round(3 · 80 / 40)).
        #expect(drums[0]["pulses"] == 50 + 6 + 6 && drums[0]["at"] == 12, "\(drums[0])\n\(qemu.stdout)")
        // No pulse in a turn and a half (121 steps), twice: faulty, left still.
        #expect(drums[1]["pulses"] == 2 * 121, "\(drums[1])")
        #expect(console.contains { $0.contains("found no home pulse in a turn and a half: faulty after 2 failures, left still") }, "\(qemu.stdout)")
        // Status says so: the module is faulty, with its failures.
        let status = try #require(console.first { $0.hasPrefix("STATUS {") }, "\(qemu.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.dropFirst(7).utf8)) as? [String: Any])
        let health = ((report["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any])
        #expect(health?["faulty"] as? Int == 1 && health?["ok"] as? Int == 0, "\(status)")
        let module = (health?["reported"] as? [[String: Any]])?.first
        #expect(module?["state"] as? String == "faulty" && module?["failures"] as? Int == 2, "\(status)")
        // A line the chip does not have: named, with the chip's range; flapd does not start.
        #expect(console.contains("FLAPD-EXIT badline 1"), "\(qemu.stdout)")
        #expect(console.contains { $0.contains("board 'sim': gpiochip0 has lines 0–15; line 99 does not exist") }, "\(qemu.stdout)")
    }

    /// Issue 12 (6a): SIGTERM mid-transition on a STEP/DIR board. What flapd saves
    /// (`boards.json`) must be where the STEP pulses the kernel recorded took each drum — before,
    /// the lines went on for hundreds of pulses after the saved state was written. Then a
    /// restart and a new message: every drum's total pulses land it exactly on the new flap.
    @Test(.timeLimit(.minutes(30)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func aStopMidTransitionLeavesEveryDrumWhereTheSavedStateSays() async throws {
        // 80 steps on 40 flaps (2 a flip), 300 ms flips: "+++" takes 12 s, and the stop comes as
        // soon as the message is accepted (however slow the guest, well inside those 12 s).
        guard let (console, states) = try await twoRuns("stop", timing: "{ flip_ms: 300, column_stagger_ms: 100 }", stepsPerRevolution: 80,
                                                        first: "+++", interrupt: """
            kill -TERM $f; wait $f
            echo "FLAPD-EXIT stop $?"
            echo "SAVED $(tr -d '\n ' < /tmp/s/boards.json)"
            """) else { return }
        #expect(console.contains("FLAPD-EXIT stop 0"), "\(console)")
        func saved(_ prefix: String) -> [Int]? {
            guard let line = console.first(where: { $0.hasPrefix(prefix + " {") }),
                  let json = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(prefix.count + 1).utf8)) as? [String: Any],
                  let board = (json["boards"] as? [[String: Any]])?.first else { return nil }
            return board["positions"] as? [Int]
        }
        let stopped = try #require(saved("SAVED"), "\(console)")
        let final = try #require(saved("SAVED-AGAIN"), "\(console)")
        // Where the first run's pulses end: the second run's first write enables the drivers again.
        let restart = states.indices.dropFirst().first { i in !states[i][4] && states[i - 1][4] && states[..<i].contains { $0[0] || $0[1] || $0[2] } }
        let firstRun = states[..<(restart ?? states.count)]
        #expect(stopped.contains { $0 < 39 }, "the stop came mid-transition: \(stopped)")
        for m in 0..<3 {
            // 2 steps a flap on this drum: flap k is 2k steps from blank.
            #expect(Self.rises(firstRun, m) == 2 * stopped[m], "module \(m): \(Self.rises(firstRun, m)) pulses, saved at flap \(stopped[m])")
            let all = Self.rises(states[...], m)
            #expect(all % 80 == 2 * (m + 2) && final[m] == m + 2, "module \(m): \(all) pulses in all, saved \(final[m])")
        }
    }

    /// Issue 12 (6b): SIGKILL at a random instant mid-transition — 10 steps a flip, so a moving
    /// module is almost always caught between two flaps — then a restart and a new message: every
    /// drum's total pulses, over both runs, land it exactly on the new flap. The step journal
    /// knows each motor's place to the step and the restart finishes the flip it was in.
    @Test(.timeLimit(.minutes(30)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func aKillMidFlipThenARestartLandsEveryDrumExactly() async throws {
        // 400 steps on 40 flaps, 200 ms flips: "+++" takes 8 s.
        guard let (console, states) = try await twoRuns("kill", timing: "{ flip_ms: 200, column_stagger_ms: 100 }", stepsPerRevolution: 400,
                                                        first: "+++", interrupt: """
            n=$(( $(od -An -tu2 -N2 /dev/urandom) % 1000 )); i=0
            while [ $i -lt $n ]; do i=$((i + 1)); done
            kill -KILL $f; wait $f
            echo "KILLED after $n"
            """) else { return }
        #expect(console.contains { $0.hasPrefix("KILLED after ") }, "\(console)")
        // The restart's line request puts ENABLE back to disabled (the kill left it enabled).
        let restart = states.indices.first { i in i > 0 && states[i][4] && states[..<i].contains { $0[0] || $0[1] || $0[2] } } ?? states.count
        let killedAt = (0..<3).map { Self.rises(states[..<restart], $0) }
        #expect(killedAt.contains { $0 < 390 }, "the kill came mid-transition: \(killedAt) of 390 steps")
        for m in 0..<3 {
            let all = Self.rises(states[...], m)
            // 10 steps a flap: flap k is 10k steps past blank, a turn 400.
            #expect(all % 400 == 10 * (m + 2), "module \(m): killed after \(killedAt[m]) steps, \(all) in all, \(all % 400) into the turn, not on flap \(m + 2)")
        }
    }

    /// Two runs of `flapd run` on a 1 × 3 STEP/DIR board of the simulator (STEP 0–2, DIR 3,
    /// ENABLE 4; `timing` and `stepsPerRevolution` as given), one state folder: the first is
    /// sent `first` and ended by `interrupt` (guest shell; `$f` is flapd), the second is sent
    /// "BCD" and stopped once it has settled. Returns the console and the line states the
    /// kernel traced over both runs, from the request's idle levels on; nil (recorded) without.
    func twoRuns(_ name: String, timing: String, stepsPerRevolution: Int, first: String,
                 interrupt: String) async throws -> (console: [String], states: [[Bool]])? {
        let dir = try scratchDirectory("flap-gpio-\(name)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let modules = try await QEMUGuest.gpioSimModules(into: dir)
        try """
            local_api: { port: 7000 }
            sound: { enabled: false }
            boards:
              - id: sim
                rows: 1
                cols: 3
                output: gpio
                timing: \(timing)
                gpio: { chip: gpiochip0, kind: step_dir, step: [0, 1, 2], dir: 3, enable: 4, steps_per_revolution: \(stepsPerRevolution), pulse_us: 2000 }
            """.write(toFile: "\(dir)/\(name).yaml", atomically: true, encoding: .utf8)
        let run = "/flapd run --config /\(name).yaml --state-dir /tmp/s --plain --no-sound"
        let guest = try await QEMUGuest(dir: dir, script: Self.setup + """
            echo 1 > $T/events/gpio/gpio_value/enable
            ip link set lo up
            mkdir -p /tmp/s
            echo > $T/trace
            \(run) > /tmp/run1.log 2>&1 &
            f=$!
            until grep -q "local API listening" /tmp/run1.log; do :; done
            /flapd send --url http://127.0.0.1:7000 "\(first)"
            \(interrupt)
            \(run) > /tmp/run2.log 2>&1 &
            f=$!
            until grep -q "local API listening" /tmp/run2.log; do :; done
            /flapd send --url http://127.0.0.1:7000 "BCD"
            until /flapd status --url http://127.0.0.1:7000 | grep -q '"moving" *: *false'; do :; done
            kill -TERM $f; wait $f
            echo "FLAPD-EXIT again $?"
            echo "SAVED-AGAIN $(tr -d '\n ' < /tmp/s/boards.json)"
            echo "RECORD-BEGIN base $base"; grep gpio_value $T/trace; echo "RECORD-END"
            cat /tmp/run1.log /tmp/run2.log
            """, files: [FlapdProcess.executable, "\(dir)/\(name).yaml"] + modules)
        let qemu = try guest.boot()
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        #expect(console.contains("FLAPD-EXIT again 0"), "\(qemu.stdout)")
        guard let begin = console.firstIndex(where: { $0.hasPrefix("RECORD-BEGIN base ") }), let end = console.firstIndex(of: "RECORD-END") else {
            Issue.record("no recording: \(qemu.stdout)"); return nil
        }
        let base = Int(console[begin].split(separator: " ").last ?? "") ?? 0
        return (console, [[false, false, false, true, true]] + Self.writes(console[(begin + 1)..<end], base: base, lines: [0, 1, 2, 3, 4]))
    }

    /// The rising edges of line `m` in `states`.
    static func rises(_ states: ArraySlice<[Bool]>, _ m: Int) -> Int {
        states.indices.filter { $0 > states.startIndex && states[$0][m] && !states[$0 - 1][m] }.count
    }

    /// A 16-line gpio-sim chip (`$chip`, `$sim`), tracefs mounted: `$base` is the chip's first
    /// GPIO number in trace events, `$T` tracefs.
    static let setup = QEMUGuest.gpioSim(lines: 16) + """
        base=$(cat /sys/class/gpio/gpiochip*/base)
        T=/sys/kernel/tracing
        mount -t tracefs none $T && echo 8192 > $T/buffer_size_kb

        """

    /// The line levels after each write of a request of `lines`, from the kernel's trace: a
    /// bulk write traces one `gpio_value: <base + offset> set <0|1>` a line, in request order.
    static func writes(_ trace: ArraySlice<String>, base: Int, lines: [Int]) -> [[Bool]] {
        var states: [[Bool]] = []
        var current = Array(repeating: false, count: lines.count), next = 0
        for line in trace {
            guard let m = line.firstMatch(of: /gpio_value: (\d+) set (\d)/), let gpio = Int(m.1),
                  let i = lines.firstIndex(of: gpio - base) else { continue }
            if i != next { Issue.record("trace out of request order at: \(line)"); next = i }
            current[i] = m.2 == "1"
            next = (i + 1) % lines.count
            if next == 0 { states.append(current) }
        }
        return states
    }

    /// Steps of a planned move from blank on the 40-flap standard drum, the k-th flap boundary
    /// at round(k · steps / 40) — worked out here, not by flapd's code.
    func expectedSteps(_ move: [String: Any]?, stepsPerRevolution s: Int) -> Int {
        guard let move else { return 0 }
        let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
        let from = drum.firstIndex(of: Character(move["from"] as! String))!
        let boundary = { (k: Int) in (k / 40) * s + Int((Double(k % 40) * Double(s) / 40).rounded()) }
        return boundary(from + (move["flips"] as! Int)) - boundary(from)
    }

    /// STEP lines 0 and 1, DIR 2, ENABLE 3 (active low): one rising edge a step, the cascade's
    /// first mover first, DIR forward and the drivers enabled whenever a STEP line is high, and
    /// ENABLE disabled from the line request on (issue 12: the request drove every line low —
    /// drivers enabled, DIR reversed — until flapd wrote the idle levels) → enabled → disabled.
    func checkStepDir(_ states: [[Bool]], steps: [Int], firstMover: Int) {
        let rises = (0..<2).map { line in states.indices.filter { $0 > 0 && states[$0][line] && !states[$0 - 1][line] } }
        #expect(rises.map(\.count) == steps, "step pulses per module: \(states)")
        // Never after the other (a late write may carry both modules' first steps at once).
        #expect(rises[firstMover].first! <= rises[1 - firstMover].first!, "the cascade's first module steps first")
        #expect(states.filter { $0[0] || $0[1] }.allSatisfy { $0[2] && !$0[3] }, "DIR high and ENABLE low while stepping")
        #expect(states.first == [false, false, true, true], "the request's own levels: \(states.prefix(2))")
        var enable: [Bool] = []
        for s in states where enable.last != s[3] { enable.append(s[3]) }
        #expect(enable == [true, false, true], "ENABLE: \(enable)")
        let lastFall = states.lastIndex { $0[0] || $0[1] }.map { $0 + 1 } ?? 0
        #expect(states[lastFall...].contains { $0[3] }, "drivers disabled after the last step")
    }

    /// Each module's coils walk `sequence` from its start one step at a time, the expected
    /// number of steps, then are released (all off); the first mover moves first.
    func checkCoils(_ states: [[[Bool]]], steps: [Int], sequence: [[Bool]], firstMover: Int) {
        let off = [false, false, false, false]
        var firstChange: [Int] = []
        for m in 0..<2 {
            var seen: [[Bool]] = []
            for s in states where seen.last != s[m] { seen.append(s[m]) }
            let wanted = [off] + (1...max(1, steps[m])).map { sequence[$0 % sequence.count] } + [off]
            #expect(steps[m] == 0 ? seen.allSatisfy { $0 == off } : seen == wanted, "module \(m): \(seen)")
            firstChange.append(states.firstIndex { $0[m] != off } ?? Int.max)
        }
        #expect(firstChange[firstMover] <= firstChange[1 - firstMover], "the cascade's first module moves first (or in the same write)")
    }

    /// MAX7219s read back by a model written here (a 16-bit register a device, DIN in on CLK's
    /// rising edge while CS is low, passed down the chain; every device latches on CS's rising
    /// edge): the setup registers, then module 0 showing "A" and module 1 "B", drawn by hand.
    func checkMAX7219(_ states: [[Bool]]) {
        var shift = [UInt16](repeating: 0, count: 2)
        var registers = [[UInt8: UInt8]](repeating: [:], count: 2)
        for (i, s) in states.enumerated() where i > 0 {
            let before = states[i - 1]
            if s[1] && !before[1] && !s[2] {
                let carry = shift[0] & 0x8000 != 0
                shift[0] = shift[0] << 1 | (s[0] ? 1 : 0)
                shift[1] = shift[1] << 1 | (carry ? 1 : 0)
            }
            if s[2] && !before[2] { for d in 0..<2 { registers[d][UInt8(shift[d] >> 8)] = UInt8(shift[d] & 0xFF) } }
        }
        let a: [UInt8] = [0x38, 0x44, 0x44, 0x7C, 0x44, 0x44, 0x44, 0]  // " ### ", "#   #", "#   #", "#####", …
        let b: [UInt8] = [0x78, 0x44, 0x44, 0x78, 0x44, 0x44, 0x78, 0]  // "#### ", "#   #", "#   #", "#### ", …
        for d in 0..<2 {
            #expect([0x09, 0x0B, 0x0A, 0x0C, 0x0F].map { registers[d][$0] } == [0, 7, 9, 1, 0], "device \(d) setup: \(registers[d])")
        }
        // chain_order [1, 0]: the device nearest the Pi shows module 1.
        #expect((1...8).map { registers[0][UInt8($0)] } == b && (1...8).map { registers[1][UInt8($0)] } == a, "\(registers)")
    }

    /// The outputs a chain of 74HC595s shows after each latch, simulated here from the datasheet
    /// (DATA shifts in on CLOCK's rising edge, outputs take the register on LATCH's), as each
    /// module's four coils: chain order [1, 0], so position 0 (Q0…Q3) is module 1.
    func latched595(_ states: [[Bool]]) -> [[[Bool]]] {
        var register = Array(repeating: false, count: 8)
        var out: [[[Bool]]] = [[Array(repeating: false, count: 4), Array(repeating: false, count: 4)]]
        for (i, s) in states.enumerated() where i > 0 {
            if s[1] && !states[i - 1][1] { register = [s[0]] + register.dropLast() }
            if s[2] && !states[i - 1][2] { out.append([Array(register[4..<8]), Array(register[0..<4])]) }
        }
        return out
    }

    static let fullStep: [[Bool]] = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]].map { $0.map { $0 == 1 } }
    static let halfStep: [[Bool]] = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0],
                                     [0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [1, 0, 0, 1]].map { $0.map { $0 == 1 } }
}
