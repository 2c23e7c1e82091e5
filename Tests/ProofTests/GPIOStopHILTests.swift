import FlapCore
import FlapGPIO
import EndToEndSupport
import Foundation
import Testing

/// Issue 12 (6a, 6b) on the kernel's gpio-sim, for every kind of motor: what flapd saves at a
/// stop, and where a restart after a kill takes each drum, checked against the steps the
/// kernel's trace recorded on the lines — STEP pulses, coil patterns, or the coils a 74HC595
/// chain latched — counted here by a model of the motor, not by flapd's code.
@Suite struct GPIOStopHILTests {
    /// A 1 × 3 board of one motor kind on the simulator's first lines.
    struct Board: Sendable, CustomTestStringConvertible {
        let name: String
        /// The board's `gpio:` line for `stepsPerRevolution`.
        let gpio: @Sendable (Int) -> String
        let lines: [Int]
        /// Steps a turn for the kill test: enough that a kill almost always catches a flip half-way.
        let killSteps: Int
        /// Each module's steps in a recording (line states after each write), by the motor's model.
        let steps: @Sendable (_ states: [[Bool]]) -> [Int]
        var testDescription: String { name }
    }

    static let boards = [
        Board(name: "step_dir", gpio: { "{ chip: gpiochip0, kind: step_dir, step: [0, 1, 2], dir: 3, enable: 4, steps_per_revolution: \($0), pulse_us: 2000 }" },
              lines: [0, 1, 2, 3, 4], killSteps: 400) { states in
            let s = [Array(repeating: false, count: 5)] + states  // STEP lines idle low
            return (0..<3).map { m in s.indices.filter { $0 > 0 && s[$0][m] && !s[$0 - 1][m] }.count }
        },
        Board(name: "unipolar", gpio: { "{ chip: gpiochip0, kind: unipolar, coils: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], half_step: true, steps_per_revolution: \($0) }" },
              lines: Array(0...11), killSteps: 400) { states in
            coilSteps(states.map { s in (0..<3).map { Array(s[(4 * $0)..<(4 * $0 + 4)]) } }, sequence: GPIOHILTests.halfStep)
        },
        Board(name: "shift_chain", gpio: { "{ chip: gpiochip0, kind: shift_chain, data: 0, clock: 1, latch: 2, chain_order: [2, 0, 1], steps_per_revolution: \($0) }" },
              lines: [0, 1, 2], killSteps: 160) { states in
            coilSteps(GPIOHILTests.latched595(states, order: [2, 0, 1]), sequence: GPIOHILTests.fullStep)
        },
    ]

    /// A 28BYJ-48's rotor follows the energised pattern to the nearest place that has it: from
    /// the pattern it stands at (the sequence's first at the start), the next pattern is one step
    /// forward. Any other change is a jump the motor would not follow surely: recorded.
    static func coilSteps(_ patterns: [[[Bool]]], sequence: [[Bool]]) -> [Int] {
        let off = [false, false, false, false]
        return (0..<(patterns.first?.count ?? 0)).map { m in
            var at = 0, steps = 0, last = off
            for p in patterns.map({ $0[m] }) where p != last {
                last = p
                guard p != off else { continue }
                guard let i = sequence.firstIndex(of: p) else { Issue.record("module \(m): \(p) is no pattern of the sequence"); continue }
                let forward = (i - at + sequence.count) % sequence.count
                if forward > 1 { Issue.record("module \(m): a jump of \(forward) patterns, from \(sequence[at]) to \(p), after \(steps) steps") }
                steps += forward
                at = i
            }
            return steps
        }
    }

    /// 6a: SIGTERM mid-transition. What flapd saves (`boards.json`) must be where the steps the
    /// kernel recorded took each drum — before, the lines went on for hundreds of steps after
    /// the saved state was written. Then a restart and a new message: every drum's steps over
    /// both runs land it exactly on the new flap.
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"),
          arguments: boards)
    func aStopMidTransitionLeavesEveryDrumWhereTheSavedStateSays(board: Board) async throws {
        // 80 steps on 40 flaps (2 a flip), 200 ms flips (the most a config takes): "+++" takes
        // 8 s, and the stop comes as soon as flapd logs the message accepted (not once `flapd
        // send` has returned: with the host loaded, a stop sent then once came after the whole
        // 8 s message).
        // A guest starved for the whole 8 s stops a settled board, which says nothing of a stop
        // mid-transition: the scene is set up again, up to 5 times.
        try await Self.untilMidTransition { attempt in
            guard let (console, first, second) = try await twoRuns(board, "stop", timing: "{ flip_ms: 200, column_stagger_ms: 100 }",
                                                                   stepsPerRevolution: 80, first: "+++", interrupt: """
                kill -TERM $f; wait $f
                echo "FLAPD-EXIT stop $?"
                echo "SAVED $(tr -d '\\n ' < /tmp/s/boards.json)"
                """) else { return nil }
            #expect(console.contains("FLAPD-EXIT stop 0"), "\(console)")
            let stopped = try #require(Self.saved("SAVED", console), "\(console)")
            let final = try #require(Self.saved("SAVED-AGAIN", console), "\(console)")
            guard stopped.contains(where: { $0 < 39 }) else {
                return "the stop never came mid-transition: \(stopped)"
            }
            let firstRun = board.steps(first), all = board.steps(first + second)
            for m in 0..<3 {
                // 2 steps a flap on this drum: flap k is 2k steps from blank.
                #expect(firstRun[m] == 2 * stopped[m], "module \(m): \(firstRun[m]) steps, saved at flap \(stopped[m])")
                #expect(all[m] % 80 == 2 * (m + 2) && final[m] == m + 2, "module \(m): \(all[m]) steps in all, saved \(final[m])")
            }
            return nil
        }
    }

    /// Sets a scene up again, up to 5 times, while `scene` (given its attempt, 1–5) returns what it
    /// saw instead of an interrupt mid-transition: a guest starved for the whole transition
    /// interrupts a settled board, which says nothing of an interrupt mid-transition. nil: done
    /// (checked, or recorded). The fifth miss is recorded. (3 were too few for a CI that shared
    /// its machine with a second one: `in 3 attempts the stop never came mid-transition`; on a
    /// machine with one CI, or under `stress-ng --cpu 8`, the first attempt has been enough.)
    static func untilMidTransition(_ scene: (_ attempt: Int) async throws -> String?) async throws {
        for attempt in 1...5 {
            guard let missed = try await scene(attempt) else { return }
            if attempt == 5 { Issue.record("in 5 attempts \(missed)") }
        }
    }

    /// The board's positions a console line `prefix {boards.json}` holds, as drum indices: saved
    /// as Vestaboard codes, read back through the standard drum " A–Z 0–9 ! ? +" — where the
    /// digits are not at their codes ('1' is code 27 and index 28, '0' code 36 and index 27).
    static func saved(_ prefix: String, _ console: [String]) -> [Int]? {
        guard let line = console.first(where: { $0.hasPrefix(prefix + " {") }),
              let json = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(prefix.count + 1).utf8)) as? [String: Any],
              let board = (json["boards"] as? [[String: Any]])?.first else { return nil }
        return (board["positions"] as? [Int])?.map { code in Drum.standard.glyphs.firstIndex { Int($0.code) == code } ?? -1 }
    }

    /// CI: a stop that landed on a digit was read one flap short ('3', code 29, taken for
    /// index 29, where the drum has it at 30) while the lines had it right.
    @Test func savedCodesAreReadAsDrumIndices() {
        #expect(Self.saved("S", [#"S {"boards":[{"positions":[0,1,26,27,29,35,36,37,60,46]}]}"#]) == [0, 1, 26, 28, 30, 36, 27, 37, 38, 39])
    }

    /// 6c: SIGTERM mid-transition on a chain of three MAX7219s: the chain's last frame draws, on
    /// every device, the glyph the saved state says (drawn with flapd's LED font, which
    /// `GPIOHILTests` checks by hand), and the next message ends on its glyphs, drawn by hand.
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func aStopMidTransitionLeavesEveryLEDModuleOnTheSavedGlyph() async throws {
        // A frame of the chain is some 2,400 traced line writes: a message's frames overflow the
        // trace buffer, which keeps the newest. So each run's last 3,000 writes are recorded (a
        // multiple of the request's 3 lines: whole writes), several frames.
        // A guest starved for the whole 8 s stops a settled chain (CI, stop 31: `[39, 39, 39]`),
        // which says nothing of a stop mid-transition: the scene is set up again, up to 5 times,
        // as for the drums.
        try await Self.untilMidTransition { attempt in
            guard let (console, first, second) = try await twoRuns(Self.max7219, "ledstop", timing: "{ flip_ms: 200, column_stagger_ms: 100 }",
                                                                   stepsPerRevolution: 0, first: "+++", second: "BAB",
                                                                   record: "grep gpio_value $T/trace | tail -n 9000", interrupt: """
                kill -TERM $f; wait $f
                echo "FLAPD-EXIT stop $?"
                echo "SAVED $(tr -d '\\n ' < /tmp/s/boards.json)"
                """) else { return nil }
            #expect(console.contains("FLAPD-EXIT stop 0"), "\(console)")
            let stopped = try #require(Self.saved("SAVED", console), "\(console)")
            print("ledstop: attempt \(attempt) stopped at flaps \(stopped)")
            guard stopped.contains(where: { $0 < 39 }) else {
                return "the stop never came mid-transition: \(stopped)"
            }
            let atStop = GPIOHILTests.max7219Registers(first, devices: 3).map(GPIOHILTests.digits)
            let saved = stopped.map { LEDFont.rows(Drum.standard.glyphs[$0]) }
            #expect(atStop == saved, "the chain's last frame at the stop \(atStop); the saved flaps \(stopped) are drawn \(saved)")
            let ended = GPIOHILTests.max7219Registers(second, devices: 3).map(GPIOHILTests.digits)
            #expect(ended == [GPIOHILTests.letterB, GPIOHILTests.letterA, GPIOHILTests.letterB], "after the restart's message: \(ended)")
            return nil
        }
    }

    /// 6c with 6b: SIGKILL at a random instant mid-transition on the MAX7219 chain, then a
    /// restart and a new message: the chain's last frame draws the new message's glyphs on every
    /// device, and the state saved at the end says the same.
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func aKillMidTransitionThenARestartLandsEveryLEDModuleOnTheNewGlyph() async throws {
        // A starved guest can be killed after the transition has ended (stress-ng, da53684: the
        // chain's last frame was "+++"), which says nothing of a kill mid-transition: the scene
        // is set up again, up to 5 times, as for the stop.
        try await Self.untilMidTransition { attempt in
            guard let (console, first, second) = try await twoRuns(Self.max7219, "ledkill", timing: "{ flip_ms: 200, column_stagger_ms: 100 }",
                                                                   stepsPerRevolution: 0, first: "+++", second: "BAB",
                                                                   record: "grep gpio_value $T/trace | tail -n 9000", interrupt: """
                n=$(( $(od -An -tu2 -N2 /dev/urandom) % 1000 )); i=0
                while [ $i -lt $n ]; do i=$((i + 1)); done
                kill -KILL $f; wait $f
                echo "KILLED after $n"
                """) else { return nil }
            #expect(console.contains { $0.hasPrefix("KILLED after ") }, "\(console)")
            let plus = LEDFont.rows(Drum.standard.glyphs[39])
            let atKill = GPIOHILTests.max7219Registers(first, devices: 3).map(GPIOHILTests.digits)
            print("ledkill: attempt \(attempt) killed with the chain's last frame \(atKill.map { $0 == plus ? "+" : "…" })")
            guard atKill.contains(where: { $0 != plus }) else {
                return "the kill never came mid-transition: the chain's last frame \(atKill)"
            }
            let ended = GPIOHILTests.max7219Registers(second, devices: 3).map(GPIOHILTests.digits)
            #expect(ended == [GPIOHILTests.letterB, GPIOHILTests.letterA, GPIOHILTests.letterB], "after the restart's message: \(ended)")
            #expect(Self.saved("SAVED-AGAIN", console) == [2, 1, 2], "\(console)")
            return nil
        }
    }

    /// A chain of three MAX7219s on the simulator's first three lines.
    static let max7219 = Board(name: "max7219", gpio: { _ in "{ chip: gpiochip0, kind: max7219, din: 0, clk: 1, cs: 2, chain_order: [0, 1, 2], intensity: 9 }" },
                               lines: [0, 1, 2], killSteps: 0) { _ in [] }

    /// 6b: SIGKILL at a random instant mid-transition — several steps a flip, so a moving module
    /// is almost always caught between two flaps — then a restart and a new message: every
    /// drum's steps over both runs land it exactly on the new flap. The step journal knows each
    /// motor's place to the step (and a coil motor's pattern), and the restart finishes the
    /// flip it was in. The one place it cannot know is a module the kill left *in flight*
    /// (between the journal's store before a step's write and its store after): the motor made
    /// that step or not. A coil motor's restart energises the journal's pattern again, which
    /// takes the rotor there either way: it lands exactly. A STEP pulse cannot be made again
    /// without moving the motor, so without a home sensor the restart takes it as made
    /// (`StepJournal`): a STEP/DIR drum lands exactly, or one step short when the kernel's
    /// trace shows the step was not written (CI, stop 50: module 0 killed at 16 steps with 17
    /// in flight, 19 steps into the turn after the restart). The journal the kill left is read
    /// back: each module's place in it must be the steps the kernel traced.
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"),
          arguments: boards)
    func aKillMidFlipThenARestartLandsEveryDrumExactly(board: Board) async throws {
        let turn = board.killSteps, perFlap = board.killSteps / 40
        // 200 ms flips: "+++" takes 8 s. A starved guest can be killed after the transition has
        // ended (CI of edf2356, unipolar: `[390, 390, 390] of 390 steps`), which says nothing of
        // a kill mid-flip: the scene is set up again, up to 5 times, as for the stops.
        try await Self.untilMidTransition { attempt in
            guard let (console, first, second) = try await twoRuns(board, "kill", timing: "{ flip_ms: 200, column_stagger_ms: 100 }",
                                                                   stepsPerRevolution: turn, first: "+++", interrupt: """
                n=$(( $(od -An -tu2 -N2 /dev/urandom) % 1000 )); i=0
                while [ $i -lt $n ]; do i=$((i + 1)); done
                kill -KILL $f; wait $f
                echo "KILLED after $n"
                echo "JOURNAL $(od -An -tu4 -v -j 16 -N 12 /tmp/s/steps-sim.bin)"
                """) else { return nil }
            #expect(console.contains { $0.hasPrefix("KILLED after ") }, "\(console)")
            let journal = try #require(Self.journaled(console), "\(console)")
            let killedAt = board.steps(first), all = board.steps(first + second)
            print("kill \(board.name): attempt \(attempt) killed at steps \(killedAt) of \(39 * perFlap)")
            guard killedAt.contains(where: { $0 < 39 * perFlap }) else {
                return "the kill never came mid-transition: \(killedAt) of \(39 * perFlap) steps"
            }
            for m in 0..<3 {
                let (place, inFlight) = journal[m]
                // Not in flight: the journal holds the kernel's count. In flight: that step, written or not.
                let short = place - killedAt[m], pulses = board.name == "step_dir"
                #expect(short == 0 || (inFlight && short == 1),
                        "module \(m): the journal holds \(place)\(inFlight ? " in flight" : ""), the kernel traced \(killedAt[m]) steps")
                #expect(all[m] % turn == (perFlap * (m + 2) - (pulses ? short : 0) + turn) % turn,
                        "module \(m): killed after \(killedAt[m]) steps (journal \(place)\(inFlight ? " in flight" : "")), \(all[m]) in all, \(all[m] % turn) into the turn, not on flap \(m + 2)")
            }
            return nil
        }
    }

    /// Each module's place (steps from flap 0's edge) and whether it was in flight, from the
    /// console line `JOURNAL u32 u32 u32` (the step journal's three places, as `od` reads them).
    static func journaled(_ console: [String]) -> [(place: Int, inFlight: Bool)]? {
        guard let line = console.first(where: { $0.hasPrefix("JOURNAL ") }) else { return nil }
        let values = line.dropFirst(8).split(separator: " ").compactMap { UInt32($0) }
        guard values.count == 3 else { return nil }
        return values.map { (place: Int($0 & 0x7FFF_FFFF), inFlight: $0 & 0x8000_0000 != 0) }
    }

    @Test func theJournalLineReadsPlacesAndInFlight() {
        let read = Self.journaled(["x", "JOURNAL         16  2147483665          0"])
        #expect(read?.map(\.place) == [16, 17, 0])
        #expect(read?.map(\.inFlight) == [false, true, false])
        #expect(Self.journaled(["JOURNAL 1 2"]) == nil)
    }

    /// Two runs of `flapd run` on `board` (`timing` and `stepsPerRevolution` as given), one state
    /// folder: the first is sent `first` and, once it logs the message accepted, ended by
    /// `interrupt` (guest shell; `$f` is flapd),
    /// the second is sent `second` and stopped once it has settled; each run's lines are
    /// recorded by `record`. Every wait in the guest ends when
    /// flapd does (a config it refuses, say: its log is printed). Returns the console and the line
    /// states the kernel traced in each run; nil (recorded) without.
    func twoRuns(_ board: Board, _ name: String, timing: String, stepsPerRevolution: Int, first: String, second: String = "BCD",
                 record: String = "grep gpio_value $T/trace",
                 interrupt: String) async throws -> (console: [String], first: [[Bool]], second: [[Bool]])? {
        let dir = try scratchDirectory("flap-gpio-\(name)-\(board.name)")
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
                gpio: \(board.gpio(stepsPerRevolution))
            """.write(toFile: "\(dir)/\(name).yaml", atomically: true, encoding: .utf8)
        let run = "/flapd run --config /\(name).yaml --state-dir /tmp/s --plain --no-sound"
        let guest = try await QEMUGuest(dir: dir, script: GPIOHILTests.setup + """
            alive() { s=$(cut -d' ' -f3 /proc/$1/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ]; }
            echo 1 > $T/events/gpio/gpio_value/enable
            ip link set lo up
            mkdir -p /tmp/s
            echo > $T/trace
            \(run) > /tmp/run1.log 2>&1 &
            f=$!
            until grep -q "local API listening" /tmp/run1.log || ! alive $f; do sleep 0.05; done
            /flapd send --url http://127.0.0.1:7000 "\(first)" > /tmp/send1.log 2>&1 &
            s=$!
            until grep -q "message accepted" /tmp/run1.log || ! alive $f; do sleep 0.05; done
            \(interrupt)
            wait $s
            echo "RECORD-BEGIN 1 base $base"; \(record); echo "RECORD-END 1"
            echo > $T/trace
            \(run) > /tmp/run2.log 2>&1 &
            f=$!
            until grep -q "local API listening" /tmp/run2.log || ! alive $f; do sleep 0.05; done
            /flapd send --url http://127.0.0.1:7000 "\(second)"
            until /flapd status --url http://127.0.0.1:7000 | grep -q '"moving" *: *false' || ! alive $f; do sleep 0.05; done
            kill -TERM $f; wait $f
            echo "FLAPD-EXIT again $?"
            echo "SAVED-AGAIN $(tr -d '\\n ' < /tmp/s/boards.json)"
            echo "RECORD-BEGIN 2 base $base"; \(record); echo "RECORD-END 2"
            cat /tmp/run1.log /tmp/run2.log
            """, files: [try await QEMUGuest.releaseFlapd.value, "\(dir)/\(name).yaml"] + modules)
        let qemu = try guest.boot()
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        #expect(console.contains("FLAPD-EXIT again 0"), "\(qemu.stdout)")
        var runs: [[[Bool]]] = []
        for r in 1...2 {
            guard let begin = console.firstIndex(where: { $0.hasPrefix("RECORD-BEGIN \(r) base ") }), let end = console.firstIndex(of: "RECORD-END \(r)") else {
                Issue.record("no recording of run \(r): \(qemu.stdout)"); return nil
            }
            let base = Int(console[begin].split(separator: " ").last ?? "") ?? 0
            // Each run starts from the levels its line request gives (the first traced write).
            runs.append(GPIOHILTests.writes(console[(begin + 1)..<end], base: base, lines: board.lines))
        }
        return (console, runs[0], runs[1])
    }
}
