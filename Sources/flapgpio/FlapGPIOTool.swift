import ArgumentParser
import FlapGPIO
import FlapTiming
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `flapgpio`: GPIO helpers beside flapd — time libgpiod bulk writes on a chip, and record the
/// output lines of the kernel's gpio-sim (the GPIO hardware-in-the-loop test's recorder).
@main
struct FlapGPIOTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flapgpio",
        abstract: "GPIO helpers: time bulk writes, record gpio-sim lines.",
        subcommands: [Bench.self, Watch.self, Drum.self])

    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time libgpiod bulk writes of some lines; prints FLAPGPIO {json}.")
        @Option(help: "GPIO chip (gpiochip0 or /dev/gpiochip0).") var chip = "gpiochip0"
        @Option(help: "Line offsets, comma-separated.") var lines = "0,1,2"
        @Option(help: "How many writes.") var count = 20_000

        func run() throws {
            let offsets = lines.split(separator: ",").compactMap { Int($0) }
            let outputs: LibgpiodOutputs
            do { outputs = try LibgpiodOutputs(chip: chip, lines: offsets, initial: offsets.map { _ in false }) } catch {
                FileHandle.standardError.write(Data("flapgpio: \(error)\n".utf8))
                throw ExitCode(1)
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

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record gpio-sim output lines: prints '<ns> <levels>' (one 0/1 a line, in --lines order) at start and whenever they change, until SIGTERM.",
            discussion: """
                The lines are read one after another, so a write that lands mid-sweep could show a
                mix of old and new levels: a state is printed only once two sweeps in a row agree.
                """)
        @Option(help: "The gpio-sim chip's sysfs folder (holding sim_gpioN/value).") var sim: String
        @Option(help: "Line offsets, comma-separated.") var lines: String

        func run() throws {
            let offsets = lines.split(separator: ",").compactMap { Int($0) }
            let fds = offsets.map { open("\(sim)/sim_gpio\($0)/value", O_RDONLY) }
            if let bad = fds.firstIndex(where: { $0 < 0 }) {
                FileHandle.standardError.write(Data("flapgpio: cannot read \(sim)/sim_gpio\(offsets[bad])/value\n".utf8))
                throw ExitCode(1)
            }
            signal(SIGTERM) { _ in stopRequested = 1 }
            func sweep() -> [UInt8] {
                fds.map { fd in
                    var byte: UInt8 = 0
                    return pread(fd, &byte, 1, 0) == 1 && byte == UInt8(ascii: "1") ? UInt8(ascii: "1") : UInt8(ascii: "0")
                }
            }
            var shown: [UInt8] = []
            var previous = sweep()
            var out = ""
            while stopRequested == 0 {
                let now = sweep()
                if now == previous, now != shown {
                    out += "\(MonotonicClock.now()) \(String(decoding: now, as: UTF8.self))\n"
                    shown = now
                    if out.utf8.count > 1 << 16 { FileHandle.standardOutput.write(Data(out.utf8)); out = "" }
                }
                previous = now
            }
            FileHandle.standardOutput.write(Data(out.utf8))
        }
    }
}

extension FlapGPIOTool {
    struct Drum: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Simulate a drum with a hall-effect home sensor on gpio-sim: count the STEP line's pulses, hold the sensor line low while the drum is at its magnet; print DRUM {json} on SIGTERM.")
        @Option(help: "The gpio-sim chip's sysfs folder.") var sim: String
        @Option(help: "The module's STEP line.") var stepLine: Int
        @Option(help: "The sensor's (input) line.") var sensorLine: Int
        @Option(help: "Steps a turn.") var steps: Int
        @Option(help: "Where the magnet is, in steps from the drum's 0.") var magnet = 0
        @Option(help: "How many steps the magnet holds the sensor.") var width = 2
        @Option(help: "Where the drum stands at start, in steps.") var start = 0
        @Flag(help: "A dead sensor: never pulls down.") var dead = false

        func run() throws {
            let step = open("\(sim)/sim_gpio\(stepLine)/value", O_RDONLY)
            let pull = open("\(sim)/sim_gpio\(sensorLine)/pull", O_WRONLY)
            guard step >= 0, pull >= 0 else { throw ValidationError("cannot open the lines under \(sim)") }
            signal(SIGTERM) { _ in stopRequested = 1 }
            var position = start, high = false, pulses = 0, magnetPasses = 0
            func setSensor() {
                let near = !dead && ((position - magnet) % steps + steps) % steps < width
                let text = near ? "pull-down" : "pull-up"
                _ = pwrite(pull, text, text.utf8.count, 0)
            }
            setSensor()
            while stopRequested == 0 {
                var byte: UInt8 = 0
                guard pread(step, &byte, 1, 0) == 1 else { continue }
                let now = byte == UInt8(ascii: "1")
                if now && !high {
                    position += 1
                    pulses += 1
                    if ((position - magnet) % steps + steps) % steps == 0 { magnetPasses += 1 }
                    setSensor()
                }
                high = now
            }
            print("DRUM {\"position\":\(position),\"at\":\(((position - magnet) % steps + steps) % steps),\"pulses\":\(pulses),\"magnet_passes\":\(magnetPasses)}")
        }
    }
}

nonisolated(unsafe) var stopRequested: sig_atomic_t = 0
