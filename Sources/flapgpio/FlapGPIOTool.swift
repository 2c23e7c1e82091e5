import ArgumentParser
import FlapGPIO
import FlapClock
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `flapgpio`: GPIO helpers beside flapd — time libgpiod bulk writes on a chip, and simulate a
/// drum with a home sensor on the kernel's gpio-sim (the GPIO hardware-in-the-loop test's).
@main
struct FlapGPIOTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flapgpio",
        abstract: "GPIO helpers: time bulk writes; simulate a drum on gpio-sim.",
        subcommands: [Bench.self, Drum.self])

    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time libgpiod bulk writes of some lines; prints FLAPGPIO {json}.")
        @Option(help: "GPIO chip (gpiochip0 or /dev/gpiochip0).") var chip = "gpiochip0"
        @Option(help: "Line offsets, comma-separated.") var lines = "0,1,2"
        @Option(help: "How many writes.") var count = 20_000
        @Flag(help: "Only request the lines, print HELD and keep them until killed (to test a busy line).") var hold = false

        func run() throws {
            let offsets = lines.split(separator: ",").compactMap { Int($0) }
            let outputs: LibgpiodOutputs
            do { outputs = try LibgpiodOutputs(chip: chip, lines: offsets, initial: offsets.map { _ in false }) } catch {
                FileHandle.standardError.write(Data("flapgpio: \(error)\n".utf8))
                throw ExitCode(1)
            }
            if hold {
                FileHandle.standardOutput.write(Data("HELD\n".utf8))
                while true { pause() }
            }
            var levels = offsets.map { _ in false }
            let start = MonotonicClock.now()
            for i in 0..<count {
                levels[i % levels.count].toggle()
                try outputs.write(levels)
            }
            let ns = Double(MonotonicClock.now() - start) / Double(count)
            print("FLAPGPIO {\"libgpiod\":\"\(LibgpiodOutputs.api)\",\"lines\":\(offsets.count),\"writes\":\(count),\"ns_per_write\":\(Int(ns))}")
        }
    }

    struct Drum: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Simulate a drum with a hall-effect home sensor on gpio-sim; print DRUM {json} at the end.",
            discussion: """
                Follows the kernel's gpio_value trace events (tracefs trace_pipe, gpio_value \
                enabled), so that no STEP pulse is missed: each rising edge of the STEP line turns \
                the drum a step, and while the drum stands at its magnet the sensor line is pulled \
                down (up otherwise). Ends at a line 'END' in the trace (write one to trace_marker). \
                A hall sensor answers at once: the drum runs SCHED_FIFO, so that it pulls the sensor \
                before a stepping thread of normal priority takes another step, however loaded the \
                machine ("fifo":1 in the DRUM line; 0 if the system refused).
                """)
        @Option(help: "tracefs trace_pipe.") var trace = "/sys/kernel/tracing/trace_pipe"
        @Option(help: "The chip's first GPIO number in the trace (its base).") var base: Int
        @Option(help: "The gpio-sim chip's sysfs folder (holding sim_gpioN/pull).") var sim: String
        @Option(help: "The module's STEP line.") var stepLine: Int
        @Option(help: "The sensor's (input) line.") var sensorLine: Int
        @Option(help: "Steps a turn.") var steps: Int
        @Option(help: "Where the magnet is, in steps from the drum's 0.") var magnet = 0
        @Option(help: "How many steps the magnet holds the sensor.") var width = 2
        @Option(help: "Where the drum stands at start, in steps.") var start = 0
        @Flag(help: "A dead sensor: never pulls down.") var dead = false
        @Option(help: "A STEP pulse (counted from 1) that leaves the drum where it is: a slip (repeat for more).") var lose: [Int] = []

        func run() throws {
            var param = sched_param()
            param.sched_priority = 99
            let fifo = sched_setscheduler(0, SCHED_FIFO, &param) == 0
            guard let pipe = fopen(trace, "r") else { throw ValidationError("cannot read \(trace)") }
            let pull = open("\(sim)/sim_gpio\(sensorLine)/pull", O_WRONLY)
            guard pull >= 0 else { throw ValidationError("cannot open \(sim)/sim_gpio\(sensorLine)/pull") }
            var position = start, high = false, pulses = 0
            func at() -> Int { ((position - magnet) % steps + steps) % steps }
            func setSensor() {
                let text = !dead && at() < width ? "pull-down" : "pull-up"
                _ = pwrite(pull, text, text.utf8.count, 0)
            }
            setSensor()
            let wanted = "gpio_value: \(base + stepLine) set "
            var buffer = [CChar](repeating: 0, count: 512)
            while fgets(&buffer, Int32(buffer.count), pipe) != nil {
                let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if line.contains("END") { break }
                guard let r = line.range(of: wanted) else { continue }
                let now = line[r.upperBound...].hasPrefix("1")
                if now && !high {
                    pulses += 1
                    if !lose.contains(pulses) { position += 1 }
                    setSensor()
                }
                high = now
            }
            FileHandle.standardOutput.write(Data("DRUM {\"position\":\(position),\"at\":\(at()),\"pulses\":\(pulses),\"fifo\":\(fifo ? 1 : 0)}\n".utf8))
        }
    }
}
