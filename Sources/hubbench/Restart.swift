import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Scenario {
    /// A restart under connected boards: when the old instance had stopped and the new one
    /// listened, when every board was back, how their attempts and authentications spread out
    /// (the reconnect curve), and whether the messages answered 201 just before the stop all
    /// reached their boards (live, or in the inbox a board reads when it is back).
    struct Restart {
        /// The boards of the instance restarted.
        var boards: Int
        /// Seconds after the stop (SIGTERM) that the process had ended, the new one listened,
        /// and every board had authenticated again (nil: not within two minutes).
        var stopped: Double, listening: Double, allBack: Double?
        /// Connection attempts and authentications in each `bucket` seconds after the stop.
        var curve: [(attempts: Int, authenticated: Int)], bucket: Double
        var accepted: Int, received: Int

        func report(_ label: String) -> String {
            let back = allBack.map { String(format: "all %d boards back at %.1f s", boards, $0) } ?? "NOT all \(boards) boards back within 120 s"
            let peak = Double(curve.map(\.authenticated).max() ?? 0) / bucket
            var lines = [(label + ", restart").padding(toLength: 36, withPad: " ", startingAt: 0)
                + String(format: "stopped at %.2f s, listening again at %.2f s, %@; %d attempts; peak %.0f authentications/s; received %d of %d answered 201 before the stop",
                         stopped, listening, back, curve.map(\.attempts).reduce(0, +), peak, received, accepted)]
            let widest = max(1, curve.map { max($0.attempts, $0.authenticated) }.max() ?? 1)
            lines.append(String(repeating: " ", count: 36) + String(format: "reconnect curve, each %.1f s after the stop: attempts (·) and authentications (#)", bucket))
            for (i, c) in curve.enumerated() {
                let bar = String(repeating: "#", count: c.authenticated * 40 / widest)
                    + String(repeating: "·", count: max(0, c.attempts - c.authenticated) * 40 / widest)
                lines.append(String(repeating: " ", count: 36) + String(format: "%5.1f s %7d %7d  ", Double(i) * bucket, c.attempts, c.authenticated) + bar)
            }
            return lines.joined(separator: "\n")
        }
    }

    /// Sends a message to ten boards of each sender, stops the instance `process` (SIGTERM, as
    /// systemd does) once every one is answered, starts it again on its `port`, and waits for its
    /// `boards` to come back and for the messages to arrive.
    func restart(_ process: inout Process, port: Int, boards: Int, load: Load, start: (Int) throws -> Process) async throws -> Restart {
        let shared = load.shared
        let accepted = await withTaskGroup(of: [String].self) { group in
            for s in 0..<senders {
                group.addTask {
                    var sent: [String] = []
                    for turn in 0..<min(10, load.boardNames.count / senders) {
                        if let c = await load.post(from: s, turn: turn, prefix: "R") { sent.append(c) }
                    }
                    return sent
                }
            }
            return await group.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        let stop = ContinuousClock.now
        func since(_ t: ContinuousClock.Instant) -> Double { Double((t - stop) / .milliseconds(1)) / 1000 }
        process.terminate()
        while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        let stopped = since(.now)
        process = try start(port)
        try await waitUntilListening(port)
        let listening = since(.now)
        func back() -> Int { shared.authentications.withLock { times in times.count(where: { $0 > stop }) } }
        let deadline = ContinuousClock.now + .seconds(120)
        while back() < boards, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let allBack = back() >= boards ? shared.authentications.withLock { $0.filter { $0 > stop }.max() }.map(since) : nil
        let settle = ContinuousClock.now + .seconds(30)
        func received() -> Int { shared.survivors.withLock { $0.intersection(accepted).count } }
        while received() < accepted.count, ContinuousClock.now < settle { try await Task.sleep(for: .milliseconds(20)) }

        let end = allBack ?? 120, bucket = max(0.5, (end / 40).rounded(.up))
        var curve = Array(repeating: (attempts: 0, authenticated: 0), count: Int(end / bucket) + 1)
        func tally(_ times: [ContinuousClock.Instant], _ add: (inout (attempts: Int, authenticated: Int)) -> Void) {
            for t in times where t > stop { let i = Int(since(t) / bucket); if i < curve.count { add(&curve[i]) } }
        }
        tally(shared.attempts.withLock { $0 }) { $0.attempts += 1 }
        tally(shared.authentications.withLock { $0 }) { $0.authenticated += 1 }
        return Restart(boards: boards, stopped: stopped, listening: listening, allBack: allBack, curve: curve, bucket: bucket,
                       accepted: accepted.count, received: received())
    }
}
