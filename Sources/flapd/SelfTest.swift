import ArgumentParser
import FlapBoard
import FlapClock
import Foundation

/// `flapd selftest`: every module of a running flapd's stepper boards turns once round (batched
/// by power group); then a table of the modules that are not well — slipping, missing their
/// magnet, without a sensor, faulty — and whether the turns ran late (the machine, not a module),
/// or, with --json, the whole report.
struct SelfTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Turn every GPIO module of a running flapd once round and say which are slipping or without a sensor.")

    @OptionGroup var api: LocalAPIOptions
    @Flag(help: "Print the whole report as JSON.") var json = false
    @Option(help: "Give up after this many seconds.") var timeout = 900

    func run() throws {
        _ = try api.request("POST", "/selftest")
        let deadline = MonotonicClock.now() + Int64(timeout) * 1_000_000_000
        var report: SelfTestReport
        repeat {
            MonotonicClock.sleep(until: MonotonicClock.now() + 500_000_000)
            let body = try api.request("GET", "/selftest").body
            do { report = try SelfTestReport.decode(Data(body.utf8)) } catch {
                throw fail("the answer of /selftest is not a self-test report: \(error)")
            }
        } while report.running && MonotonicClock.now() < deadline
        if json {
            print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        } else {
            let unwell = report.modules.filter { $0.verdict != "ok" }
            print("\(report.modules.count) modules turned once round: \(report.modules.count - unwell.count) ok\(report.running ? " (still turning at the time limit)" : "")")
            if report.late {
                print("the turns ended up to \(report.lateSeconds) s later than planned: flapd's step thread waited for a core (a busy Pi) or a chain is slower than its pulses — not a module's fault")
            }
            if !unwell.isEmpty {
                print("board      module  seconds  planned  magnet  verdict")
                for m in unwell {
                    let cells = [m.board.padding(toLength: 10, withPad: " ", startingAt: 0), "\(m.row),\(m.col)".padding(toLength: 7, withPad: " ", startingAt: 0),
                                 String(format: "%7.2f", m.seconds), String(format: "%8.2f", m.plannedSeconds),
                                 (m.magnetError.map(String.init) ?? "—").padding(toLength: 6, withPad: " ", startingAt: 0), m.verdict]
                    print(cells.joined(separator: " "))
                }
            }
        }
        if report.running { throw ExitCode(2) }
    }
}
