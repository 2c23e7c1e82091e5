import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// What a schedule's sources may meet, served on loopback in the test process: a good JSON
/// document (which a test may change), a good calendar, and the hostile ones — an answer that
/// never comes, one that never ends (10 GB, streamed), one that is not JSON, a 503, and a
/// calendar made to expand without end.
public final class SourceServer: Sendable {
    public let weather = Mutex(#"{"current":{"temperature_2m":3.7}}"#)
    public let calendar: String
    /// Requests served, by path.
    public let requests = Mutex<[String: Int]>([:])
    private let server = Mutex<GracefulServer?>(nil)

    public init(calendar: String) { self.calendar = calendar }

    /// A calendar whose every rule is built to cost: COUNT=10⁹ from the year 1000, nested
    /// components, and 2,000 events of a daily rule.
    public static let bomb: String = {
        var s = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bomb\r\n"
        s += "BEGIN:VEVENT\r\nSUMMARY:Forever\r\nDTSTART:10000101T000000Z\r\nRRULE:FREQ=DAILY;COUNT=1000000000\r\nEND:VEVENT\r\n"
        for i in 0..<2_000 { s += "BEGIN:VEVENT\r\nSUMMARY:Daily \(i)\r\nDTSTART:19000101T0\(i % 10)0000Z\r\nRRULE:FREQ=DAILY;COUNT=999999999\r\nEND:VEVENT\r\n" }
        return s + "END:VCALENDAR\r\n"
    }()

    public func start() async throws -> Int {
        let router = Router()
        router.get("/weather.json") { _, _ in
            self.count("/weather.json")
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: self.weather.withLock { $0 })))
        }
        router.get("/family.ics") { _, _ in
            self.count("/family.ics")
            return Response(status: .ok, headers: [.contentType: "text/calendar"], body: .init(byteBuffer: ByteBuffer(string: self.calendar)))
        }
        router.get("/bomb.ics") { _, _ in
            self.count("/bomb.ics")
            return Response(status: .ok, headers: [.contentType: "text/calendar"], body: .init(byteBuffer: ByteBuffer(string: Self.bomb)))
        }
        router.get("/hang") { _, _ -> Response in
            self.count("/hang")
            try await Task.sleep(for: .seconds(3600))
            return Response(status: .ok)
        }
        router.get("/huge") { _, _ in
            self.count("/huge")
            return Response(status: .ok, body: ResponseBody { writer in
                let chunk = ByteBuffer(repeating: UInt8(ascii: "["), count: 1 << 20)
                for _ in 0..<10_240 { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
        }
        router.get("/bad.json") { _, _ in
            self.count("/bad.json")
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"current": {"temperature_2m": 3.7"#)))
        }
        router.get("/down") { _, _ in
            self.count("/down")
            return Response(status: .serviceUnavailable)
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
        server.withLock { $0 = GracefulServer(app) }
        for await port in ports { return port }
        throw HarnessError("the source server did not start")
    }

    private func count(_ path: String) { requests.withLock { $0[path, default: 0] += 1 } }

    public func stop() { server.withLock { $0?.stop() } }
}
