import ArgumentParser
import FlapCore
import FlapClock
import FlapTiming
import Foundation

/// `flapbench`: prints the figures of the core engine. No thresholds: numbers to read.
@main
struct FlapBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flapbench",
        abstract: "Benchmarks: planner time, conductor lateness against a Task.sleep baseline (and cyclictest), flapd demo CPU and RSS, the message path through flaphub.")

    @Option(help: "Nanoseconds of one libgpiod bulk write (from `flapgpio bench`), for the GPIO chain's step rate.")
    var gpioWriteNs: Double?
    @Option(help: "Which figures: all, planner, conductor, edges, sound, demo, service, messages, serial, gpio, abuse.")
    var only: String = "all"
    @Option(help: "Seconds of full-board animation for each scheduler.")
    var seconds: Double = 10
    @Option(help: "Busy threads competing for the CPU in each conductor measurement (0: an idle machine); repeat for several.")
    var load: [Int] = [0, 2]
    @Option(help: "Full-board transitions the demo plays.")
    var transitions: Int = 20
    @Option(help: "The flapd to measure (default: the one built beside flapbench).")
    var flapd: String?
    @Option(help: "Messages sent one at a time through flaphub to flapd for the latency figures.")
    var messages: Int = 200
    @Option(help: "ALSA device for the sound figures (default: the file plugin writing to /dev/null, paced by the player).")
    var soundDevice = "file:FILE=/dev/null,FORMAT=raw"

    func run() async throws {
        if only == "all" || only == "planner" { PlannerBench.run() }
        if only == "all" || only == "serial" { SerialBench.run() }
        if only == "all" || only == "gpio" { GPIOBench.run(writeNanos: gpioWriteNs) }
        if only == "all" || only == "conductor" { await ConductorBench.run(seconds: seconds, loads: load) }
        if only == "all" || only == "edges" { EdgesBench.run(seconds: seconds) }
        if only == "all" || only == "sound" { SoundBench.run(device: soundDevice) }
        if only == "all" || only == "service" { try await ServiceBench.run(flapd: flapd) }
        if only == "all" || only == "demo" { try await DemoBench.run(transitions: transitions, flapd: flapd) }
        if only == "all" || only == "messages" { try await MessagesBench.run(flapd: flapd, messages: messages, seconds: 5) }
        if only == "all" || only == "abuse" {
            try AbuseBench.run(flapd: flapd)
            try ChurnBench.run(flapd: flapd ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flapd").path)
        }
    }
}

/// Formats a row of figures.
func row(_ label: String, _ value: String) { print(label.padding(toLength: 46, withPad: " ", startingAt: 0) + value) }
