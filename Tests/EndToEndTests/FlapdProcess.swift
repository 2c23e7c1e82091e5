import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `flapd` executable as a child process, its stdout and stderr collected as they
/// come, so that a test can wait for what it prints.
final class FlapdProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSCondition()
    private var out = Data()
    private var err = Data()
    private var exited = false
    private var openStreams = 2
    /// The process has exited and both its pipes reached end of file.
    private var ended: Bool { exited && openStreams == 0 }

    /// The flapd built beside this test bundle (or $FLAPD_BIN).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["FLAPD_BIN"] { return URL(fileURLWithPath: path) }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("flapd").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("flapd")
    }

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "FLAPD_LOCAL_API_KEY")
        env.merge(environment) { _, new in new }
        process.environment = env
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        stdout.fileHandleForReading.readabilityHandler = { [self] h in append(h, toErr: false) }
        stderr.fileHandleForReading.readabilityHandler = { [self] h in append(h, toErr: true) }
        process.terminationHandler = { [self] _ in
            lock.lock(); exited = true; lock.broadcast(); lock.unlock()
        }
        try process.run()
    }

    private func append(_ handle: FileHandle, toErr: Bool) {
        let data = handle.availableData
        lock.lock()
        if data.isEmpty {
            handle.readabilityHandler = nil
            openStreams -= 1
        } else if toErr { err.append(data) } else { out.append(data) }
        lock.broadcast()
        lock.unlock()
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }

    /// Waits until `condition` holds for (stdout, stderr) or the process has ended; the bound
    /// only keeps a broken build from hanging the suite.
    @discardableResult
    func waitUntil(_ condition: (String, String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(120)
        lock.lock()
        defer { lock.unlock() }
        while true {
            let o = String(decoding: out, as: UTF8.self), e = String(decoding: err, as: UTF8.self)
            if condition(o, e) { return true }
            if ended || !lock.wait(until: deadline) { return condition(o, e) }
        }
    }

    /// Waits for the process to end and returns its exit status.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        waitUntil { _, _ in false }  // drain what the pipes still hold
        return process.terminationStatus
    }

    /// The local API's port, from the start-up log line.
    func apiPort() -> Int? {
        var port: Int?
        waitUntil { _, e in
            guard let r = e.range(of: #"local API listening on http://[^:]+:(\d+)"#, options: .regularExpression) else { return false }
            port = Int(e[r].split(separator: ":").last!)
            return true
        }
        return port
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// One HTTP exchange with the local API over loopback.
func http(_ method: String, port: Int, path: String = "/local-api/message", body: Data? = nil,
          key: String? = nil) async throws -> (status: Int, json: Any?) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.httpMethod = method
    request.httpBody = body
    if let key { request.setValue(key, forHTTPHeaderField: "X-Vestaboard-Local-Api-Key") }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as! HTTPURLResponse).statusCode, try? JSONSerialization.jsonObject(with: data))
}

/// The plain frames a flapd printed, each as its board lines (without the `|` borders).
func frames(in output: String) -> [[String]] {
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
