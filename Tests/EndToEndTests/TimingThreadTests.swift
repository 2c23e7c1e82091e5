import EndToEndSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12, one real-time class: every thread that times output — the conductor and each
/// output's — starts named (`flapd-…`, as `ps -L` shows) with the config's real-time settings,
/// and a setting the system refuses is one warning, not one a thread.
@Suite struct TimingThreadTests {
    /// A Krone bus, a splitflap display and a flapbus whose ports are missing (their threads
    /// start and wait for them), the clack on ALSA's null device, SCHED_FIFO priority 50 asked for.
    static func config(_ dir: String) throws -> String {
        try """
            realtime: { priority: 50 }
            local_api: { port: 0 }
            sound: { device: "null" }
            boards:
              - { id: station, rows: 1, cols: 2, output: krone, serial: { port: /dev/flap-missing-krone } }
              - { id: display, rows: 1, cols: 2, output: splitflap, serial: { port: /dev/flap-missing-splitflap } }
              - { id: bus, rows: 1, cols: 2, output: flapbus, serial: { port: /dev/flap-missing-flapbus } }
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        return dir + "/flapd.yaml"
    }

    /// Each thread of a process: its name and its scheduling policy (0 normal, 1 SCHED_FIFO).
    static func threads(of pid: pid_t) -> [(name: String, policy: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var out: [(name: String, policy: Int)] = []
        for t in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "(comm)": state is field 3; policy is field 41.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            out.append((name.trimmingCharacters(in: .newlines), fields.count > 38 ? Int(fields[38]) ?? -1 : -1))
        }
        return out
    }

    static let timing = ["flapd-clack", "flapd-conductor", "flapd-flapbus", "flapd-krone", "flapd-sf-link", "flapd-splitflap"]

    @Test(.enabled(if: getuid() == 0, "needs root: granted as root, then refused as nobody"))
    func timingThreadsAreNamedGrantedAndARefusalIsOneWarning() async throws {
        let dir = try scratchDirectory("flap-threads")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o777)
        let config = try Self.config(dir)
        let granted = try FlapdProcess(["run", "--config", config, "--plain", "--state-dir", dir + "/root"])
        #expect(await granted.apiPort() != nil, "\(granted.stderr)")
        let seen = Self.threads(of: granted.pid)
        granted.terminate()
        #expect(await granted.waitForExit() == 0)
        // The timing threads, and only they, run SCHED_FIFO: the splitflap display's link too,
        // which writes each target as the cascade's thread hands it over, the flapbus link and
        // the clack.
        #expect(seen.filter { $0.policy == 1 }.map(\.name).sorted() == Self.timing, "\(seen)")
        #expect(!granted.stderr.contains("refused"), "\(granted.stderr)")

        // As nobody, without capabilities: every timing thread is refused; one warning says so.
        let refused = try FlapdProcess(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                                        FlapdProcess.executable, "run", "--config", config, "--plain", "--state-dir", dir + "/nobody"],
                                       executable: "/usr/bin/setpriv")
        #expect(await refused.apiPort() != nil, "\(refused.stderr)")
        let names = Self.threads(of: refused.pid)
        refused.terminate()
        #expect(await refused.waitForExit() == 0)
        #expect(Set(Self.timing).isSubset(of: names.map(\.name)), "\(names)")
        #expect(names.allSatisfy { $0.policy == 0 }, "\(names)")
        let warnings = refused.stderr.components(separatedBy: .newlines).filter { $0.contains("SCHED_FIFO priority 50 refused") }
        #expect(warnings.count == 1, "\(refused.stderr)")
        #expect(warnings.first?.contains("grant LimitRTPRIO or CAP_SYS_NICE") == true)
    }
}
