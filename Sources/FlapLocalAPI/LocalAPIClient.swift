#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A minimal HTTP/1.1 client for `flapd send`: one request to a local API, one answer.
/// Plain sockets, so the daemon's binary carries no HTTP client library.
public enum LocalAPIClient {
    public struct Answer: Sendable {
        public var status: Int
        public var body: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Sends `body` as JSON to `path` on host:port and returns the status and body.
    public static func post(host: String, port: Int, path: String, body: Data, key: String?) throws(Failure) -> Answer {
        try request("POST", host: host, port: port, path: path, body: body, key: key)
    }

    /// One request (`GET` with an empty body) and its answer.
    public static func request(_ method: String, host: String, port: Int, path: String, body: Data = Data(),
                               key: String?) throws(Failure) -> Answer {
        var hints = addrinfo(ai_flags: 0, ai_family: AF_UNSPEC, ai_socktype: Int32(SOCK_STREAM.rawValue),
                             ai_protocol: 0, ai_addrlen: 0, ai_addr: nil, ai_canonname: nil, ai_next: nil)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))") }
        defer { freeaddrinfo(list) }
        var fd: Int32 = -1
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let a = entry, fd < 0 {
            fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd >= 0, connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) != 0 {
                lastError = errno
                close(fd)
                fd = -1
            }
            entry = a.pointee.ai_next
        }
        guard fd >= 0 else { throw Failure(description: "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))") }
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
        if let key { head += "X-Vestaboard-Local-Api-Key: \(key)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + Array(body)
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "sending to \(host):\(port) failed: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let statusLine = parts[0].split(separator: "\r\n").first ?? ""
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else {
            throw Failure(description: "\(host):\(port) did not answer HTTP")
        }
        return Answer(status: status, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
