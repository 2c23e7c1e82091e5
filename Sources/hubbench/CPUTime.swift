import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Processor time (user + system, in ms) the kernel has counted for the processes of a run, read
/// from `/proc`: what each part of the bench costs per message, so a throughput is read against
/// the cores that served it.
struct CPUTime {
    var flaphub = 0.0, postgres = 0.0, bench = 0.0
    var total: Double { flaphub + postgres + bench }

    /// Now: the flaphub `instances`, PostgreSQL's `postmaster` with every process it runs and
    /// has reaped, and this process (its boards and senders).
    static func now(instances: [Int32], postmaster: Int32?) -> CPUTime {
        let processes = stats()
        func ms(_ ticks: Int) -> Double { Double(ticks) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK))) }
        var t = CPUTime()
        t.flaphub = ms(instances.compactMap { processes[$0] }.map { $0.own }.reduce(0, +))
        if let postmaster, let main = processes[postmaster] {
            t.postgres = ms(main.own + main.reaped + processes.values.filter { $0.parent == postmaster }.map { $0.own }.reduce(0, +))
        }
        t.bench = processes[getpid()].map { ms($0.own) } ?? 0
        return t
    }

    static func - (a: CPUTime, b: CPUTime) -> CPUTime {
        CPUTime(flaphub: a.flaphub - b.flaphub, postgres: a.postgres - b.postgres, bench: a.bench - b.bench)
    }

    /// Each part divided: per message, per second.
    static func / (a: CPUTime, n: Double) -> CPUTime {
        CPUTime(flaphub: a.flaphub / n, postgres: a.postgres / n, bench: a.bench / n)
    }

    /// Every process's parent and ticks (`utime + stime`, and `cutime + cstime` of its reaped children).
    private static func stats() -> [Int32: (parent: Int32, own: Int, reaped: Int)] {
        var result: [Int32: (parent: Int32, own: Int, reaped: Int)] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm) ": state ppid … utime(14) stime(15) cutime(16) cstime(17), counted from 1.
            let f = stat[stat.index(after: close)...].split(separator: " ").map(String.init)
            guard f.count > 14, let ppid = Int32(f[1]), let u = Int(f[11]), let s = Int(f[12]), let cu = Int(f[13]), let cs = Int(f[14]) else { continue }
            result[pid] = (ppid, u + s, cu + cs)
        }
        return result
    }
}
