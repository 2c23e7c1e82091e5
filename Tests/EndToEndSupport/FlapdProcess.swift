import FlapClock
import Foundation
import TestWaits
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `flapd` executable as a child process, its stdout and stderr collected as they
/// come, so that a test can wait for what it prints. Spawned and reaped with posix_spawn and
/// waitpid on threads of its own: Foundation's Process can block reaping one child while
/// another runs.
public final class FlapdProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSCondition()
    private var out = Data()
    private var err = Data()
    private var status: Int32?
    private var openStreams = 2
    /// The process has exited and both its pipes reached end of file.
    private var ended: Bool { status != nil && openStreams == 0 }

    /// The flapd built beside this test bundle (or $FLAPD_BIN).
    public static var executable: String {
        if let path = ProcessInfo.processInfo.environment["FLAPD_BIN"] { return path }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("flapd").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("flapd").path
    }

    /// Held from making a child's pipes to spawning it.
    private static let spawning = NSLock()

    /// Starts flapd (or another program) with these arguments; the environment is this
    /// process's, without FLAPD_LOCAL_API_KEY, plus `environment`.
    public init(_ arguments: [String], environment: [String: String] = [:], executable: String = FlapdProcess.executable) throws {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "FLAPD_LOCAL_API_KEY")
        // What ./setup --test prepares (venvs, kernels, roots) is used, never made, under a
        // test's time limit: a maker that finds its part missing says which command makes it.
        env["FLAP_PREPARED_ONLY"] = "1"
        env.merge(environment) { _, new in new }
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        // A child spawned beside this one must not hold its pipes (the reader would never see the
        // end): they are made close-on-exec before any other spawn can happen (the test's other
        // descriptors are opened close-on-exec, and Foundation's Process closes what it does not pass).
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw CocoaError(.fileReadUnknown) }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        let path = executable
        var argv = ([path] + arguments).map { strdup($0) } + [nil]
        var envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        // The child starts as systemd starts flapd: no signal blocked, every one at its default
        // (a test's thread blocks nearly all of them, and a child would inherit that).
        closeOtherDescriptors(&actions)
        let rc = withCleanSignals { posix_spawn(&pid, path, &actions, &$0, &argv, &envp) }
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else { close(outPipe[0]); close(errPipe[0]); throw CocoaError(.executableLoad) }
        self.pid = pid
        for (fd, toErr) in [(outPipe[0], false), (errPipe[0], true)] {
            Thread { [self] in drain(fd, toErr: toErr) }.start()
        }
        Thread { [self] in
            var raw: Int32 = 0
            while waitpid(self.pid, &raw, 0) < 0, errno == EINTR {}
            lock.lock()
            status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            lock.broadcast()
            lock.unlock()
        }.start()
    }

    private func drain(_ fd: Int32, toErr: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0, errno == EINTR { continue }
            lock.lock()
            if n <= 0 {
                openStreams -= 1
            } else if toErr { err.append(contentsOf: buffer[0..<n]) } else { out.append(contentsOf: buffer[0..<n]) }
            lock.broadcast()
            lock.unlock()
            if n <= 0 { close(fd); return }
        }
    }

    public var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
    public var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }

    /// Waits until `condition` holds for (stdout, stderr) or the process has ended; the bound
    /// (`within` seconds) only keeps a broken build from hanging the suite.
    @discardableResult
    public func blockingWaitUntil(within seconds: Double = 120, _ condition: (String, String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while true {
            let o = String(decoding: out, as: UTF8.self), e = String(decoding: err, as: UTF8.self)
            if condition(o, e) { return true }
            if ended || !lock.wait(until: deadline) { return condition(o, e) }
        }
    }

    /// Waits for the process to end (and its output to be read) and returns its exit status.
    /// One still running at the bound is killed (a hung QEMU guest must not outlive its test and
    /// load the machine for the rest of the suite): its status is then that of the kill.
    public func blockingWaitForExit(within seconds: Double = 120) -> Int32 {
        if !blockingWaitUntil(within: seconds, { _, _ in self.ended }) {
            kill(pid, SIGKILL)
            blockingWaitUntil(within: 30) { _, _ in self.ended }
            // Said where a failure's message shows it: a bound reached is not the program's error.
            lock.lock()
            err.append(contentsOf: Array("\n[killed by the test: still running after its bound of \(Int(seconds)) s]\n".utf8))
            lock.unlock()
        }
        lock.lock()
        defer { lock.unlock() }
        return status ?? -1
    }

    /// The waits for async tests: each blocks a thread of its own, never one of the
    /// concurrency pool, which in-process servers of other tests need to make progress.
    @discardableResult
    public func waitUntil(_ condition: @escaping @Sendable (String, String) -> Bool) async -> Bool {
        await offPool { $0.blockingWaitUntil(condition) }
    }

    public func waitForExit() async -> Int32 { await offPool { $0.blockingWaitForExit() } }

    /// For what takes minutes on a loaded machine (a build, a QEMU guest under emulation): a
    /// bound of 40 minutes against a hang, never a measure of speed. (15 minutes was reached in
    /// CI by a guest running four scenarios while the suites' other guests shared its 2 cores;
    /// on a slower machine that test took 24 of them. The QEMU suites' time limits are 45.)
    public func waitForSlowExit() async -> Int32 { await offPool { $0.blockingWaitForExit(within: 2400) } }

    /// For the slowest (a first release build of the wall's binary on a fresh clone): a bound
    /// against a hang of `seconds`.
    public func waitForExit(within seconds: Double) async -> Int32 { await offPool { $0.blockingWaitForExit(within: seconds) } }

    /// `waitUntil` with a bound of `seconds` against a hang (a guest under emulation).
    @discardableResult
    public func waitUntil(within seconds: Double, _ condition: @escaping @Sendable (String, String) -> Bool) async -> Bool {
        await offPool { $0.blockingWaitUntil(within: seconds, condition) }
    }

    public func apiPort() async -> Int? { await offPool { $0.blockingAPIPort() } }

    private func offPool<T: Sendable>(_ body: @escaping @Sendable (FlapdProcess) -> T) async -> T {
        await TestWaits.offPool { body(self) }
    }

    /// Sends SIGTERM.
    public func terminate() { kill(pid, SIGTERM) }

    /// Every thread's stack of the running process (gdb's `thread apply all bt`), for a failure
    /// whose cause is inside it (a process that stopped making progress); what gdb could not
    /// do otherwise. (CI installs gdb; `./setup --test` does not.)
    public func threadStacks() async -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "(no gdb: apt-get install gdb for the stacks)" }
        guard let gdb = try? FlapdProcess(["-p", "\(pid)", "-batch", "-ex", "thread apply all bt 25"], executable: "/usr/bin/gdb") else {
            return "(gdb did not start)"
        }
        _ = await gdb.waitForExit()
        let lines = gdb.stdout.split(separator: "\n").filter { $0.hasPrefix("Thread") || $0.hasPrefix("#") }
        return lines.prefix(600).joined(separator: "\n")
    }

    /// The local API's port, from the start-up log line.
    public func blockingAPIPort() -> Int? {
        var port: Int?
        blockingWaitUntil { _, e in
            guard let r = e.range(of: #"local API listening on http://[^:]+:(\d+)"#, options: .regularExpression) else { return false }
            port = Int(e[r].split(separator: ":").last!)
            return true
        }
        return port
    }

    deinit {
        lock.lock()
        let running = status == nil
        lock.unlock()
        if running { kill(pid, SIGKILL) }
    }
}

/// One HTTP exchange with the local API over loopback.
public func http(_ method: String, port: Int, path: String = "/local-api/message", body: Data? = nil,
          key: String? = nil) async throws -> (status: Int, json: Any?) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.httpMethod = method
    request.httpBody = body
    if let key { request.setValue(key, forHTTPHeaderField: "X-Vestaboard-Local-Api-Key") }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as! HTTPURLResponse).statusCode, try? JSONSerialization.jsonObject(with: data))
}

/// `http`, waited for on the calling thread (a plain thread's, as in `offPool`: URLSession answers
/// on a queue of its own) — for what must follow the answer at once, without waiting for a thread
/// of the concurrency pool. Status 0 when nothing answered.
public func blockingHTTP(_ method: String, port: Int, path: String = "/local-api/message", body: Data? = nil,
                         key: String? = nil) -> (status: Int, json: Any?) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.httpMethod = method
    request.httpBody = body
    if let key { request.setValue(key, forHTTPHeaderField: "X-Vestaboard-Local-Api-Key") }
    let answered = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var answer: (status: Int, json: Any?) = (0, nil)
    URLSession.shared.dataTask(with: request) { data, response, _ in
        answer = ((response as? HTTPURLResponse)?.statusCode ?? 0, data.flatMap { try? JSONSerialization.jsonObject(with: $0) })
        answered.signal()
    }.resume()
    answered.wait()
    return answer
}

/// The plain frames a flapd printed, each as its board lines (without the `|` borders).
public func frames(in output: String) -> [[String]] {
    var result: [[String]] = []
    var current: [String]?
    for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("+") && line.hasSuffix("+") {
            if let c = current { result.append(c); current = nil } else { current = [] }
        } else if line.hasPrefix("|") && line.hasSuffix("|") {
            current?.append(String(line.dropFirst().dropLast()))
        }
    }
    return result
}

/// A new empty folder of the test's own under the temporary directory, removed when the test
/// process exits if the test has not removed it: a run of the whole suite left 4–8 GiB in /tmp
/// (guest roots, packages, databases), and a CI machine's disk is shared.
public func scratchDirectory(_ prefix: String) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    ScratchFolders.shared.add(dir)
    return dir
}

/// The scratch folders this process made, each removed at its exit.
private final class ScratchFolders: @unchecked Sendable {
    static let shared: ScratchFolders = {
        atexit { ScratchFolders.shared.removeAll() }
        return ScratchFolders()
    }()
    private let lock = NSLock()
    private var folders: [String] = []

    func add(_ folder: String) { lock.withLock { folders.append(folder) } }

    func removeAll() {
        for folder in lock.withLock({ folders }) { try? FileManager.default.removeItem(atPath: folder) }
    }
}
