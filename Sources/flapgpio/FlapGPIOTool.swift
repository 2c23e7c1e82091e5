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
        subcommands: [Bench.self, Watch.self])

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

nonisolated(unsafe) var stopRequested: sig_atomic_t = 0
