import Foundation
import PostgresTesting

/// Debian's nginx in front of flaphub instances, configured by the example the README gives
/// (`packaging/nginx/flaphub.conf`), its listening port and upstream ports replaced by the
/// test's. Stops with the object.
public final class NginxProxy {
    public let port: Int
    public let directory: String
    public let process: FlapdProcess

    public static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/nginx/flaphub.conf").path

    public init(upstreams: [Int]) async throws {
        port = try freeLoopbackPort()
        let directory = try scratchDirectory("nginx")
        self.directory = directory
        var site = try String(contentsOfFile: Self.example, encoding: .utf8)
        let servers = upstreams.map { "    server 127.0.0.1:\($0) max_fails=1 fail_timeout=5s;" }.joined(separator: "\n")
        site = site.replacingOccurrences(of: #"(?m)^    server 127\.0\.0\.1:808[12].*\n"#, with: "", options: .regularExpression)
        site = site.replacingOccurrences(of: "upstream flaphub {\n", with: "upstream flaphub {\n\(servers)\n")
        site = site.replacingOccurrences(of: "listen 8080;", with: "listen 127.0.0.1:\(port);")
        try site.write(toFile: directory + "/flaphub.conf", atomically: true, encoding: .utf8)
        let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(directory)/\($0);" }.joined(separator: " ")
        try """
            \(geteuid() == 0 ? "user root;" : "")
            daemon off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log stderr notice;
            events { worker_connections 4096; }
            http { access_log off; \(temp) include \(directory)/flaphub.conf; }
            """.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try FlapdProcess(["-e", "stderr", "-p", directory, "-c", directory + "/nginx.conf"], executable: "/usr/sbin/nginx")
        guard await process.waitUntil({ _, e in e.contains("start worker process") || e.contains("emerg") }), !process.stderr.contains("emerg") else {
            throw HarnessError("nginx did not start: \(process.stderr)")
        }
    }

    deinit { process.terminate() }

    public var url: String { "http://127.0.0.1:\(port)" }
}
