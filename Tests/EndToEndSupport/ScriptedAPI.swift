import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import Synchronization

/// A message API server that plays a script: what a real hub never sends (malformed frames,
/// duplicates, a 10 MB frame, silence), on loopback in the test process.
public final class ScriptedAPI: Sendable {
    public typealias Script = @Sendable (_ scripted: Int, _ api: ScriptedAPI, _ frames: Frames, _ out: WebSocketOutboundWriter) async throws -> Void

    /// The frames a board sends on one connection, read as the script asks.
    public final class Frames: @unchecked Sendable {
        private var iterator: WebSocketInboundStream.AsyncIterator
        private let api: ScriptedAPI
        /// The script this connection plays (0 until the board took it).
        var script = 0
        /// Where pings are answered as they are read, while the script wants them answered.
        public var pongs: WebSocketOutboundWriter?
        init(_ inbound: WebSocketInboundStream, api: ScriptedAPI) { iterator = inbound.makeAsyncIterator(); self.api = api }

        /// The next text frame (recorded; a ping answered first when `pongs` is set), or nil
        /// when the connection ended.
        public func next() async throws -> String? {
            while let m = try await iterator.nextMessage(maxSize: 1 << 20) {
                guard case .text(let t) = m else { continue }
                api.received.withLock { [script] in $0.append((script, t)) }
                if let pongs, t.contains(#""type":"ping""#) { try await pongs.write(.text(#"{"type":"pong"}"#)) }
                return t
            }
            api.journal.withLock { $0.append("the board's frames ended") }
            return nil
        }

        /// Reads until a frame contains `text`.
        public func wait(for text: String) async throws {
            while let t = try await next() { if t.contains(text) { return } }
            throw HarnessError("connection ended before \(text)")
        }
    }

    /// The body of `GET …/inbox`, which a script may change.
    public let inbox: Mutex<String>
    public let script: Script
    /// Connections upgraded, and those the board took (each plays the script, numbered from 1).
    public let connections = Mutex(0), scripted = Mutex(0)
    /// The board's text frames, each with the script of its connection (0 before one).
    public let received = Mutex<[(script: Int, text: String)]>([])
    /// What happened on each connection, in order: its frames read, and how its script ended.
    public let journal = Mutex<[String]>([])
    private let server = Mutex<GracefulServer?>(nil)

    /// Whether connection n is answered `authenticated` (else it is read on in silence).
    public let authenticates: @Sendable (Int) -> Bool

    public init(inbox: String, authenticates: @escaping @Sendable (Int) -> Bool = { _ in true }, script: @escaping Script) {
        self.inbox = Mutex(inbox)
        self.authenticates = authenticates
        self.script = script
    }

    /// Starts serving; returns the port.
    public func start() async throws -> Int {
        let router = Router()
        router.get("/api/v1/messages/inbox") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: self.inbox.withLock { $0 })))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: 16 << 20, autoPing: .disabled))) { request, _, _ in
                guard request.path == "/ws" else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    let n = self.connections.withLock { $0 += 1; return $0 }
                    let frames = Frames(inbound, api: self)
                    guard let auth = try await frames.next(), auth.contains("authenticate") else { return }
                    guard self.authenticates(n) else { while try await frames.next() != nil {}; return }
                    try await outbound.write(.text(#"{"type":"authenticated","user":{"id":"board"}}"#))
                    self.journal.withLock { $0.append("connection \(n): authenticated") }
                    // flapd takes the answer by telling its face, first thing; one whose deadline
                    // rang first (this server answered late, on a starved machine) closes instead,
                    // and that connection plays no script: scripts are numbered by the connections
                    // the board took.
                    guard let face = try await frames.next(), face.contains(#""board.face""#) else {
                        self.journal.withLock { $0.append("connection \(n): the board did not take it (no board.face)") }
                        return
                    }
                    let k = self.scripted.withLock { $0 += 1; return $0 }
                    frames.script = k
                    do {
                        try await self.script(k, self, frames, outbound)
                        self.journal.withLock { $0.append("connection \(n): script \(k) ended") }
                    } catch {
                        self.journal.withLock { $0.append("connection \(n): script \(k) threw \(error)") }
                        throw error
                    }
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
        server.withLock { $0 = GracefulServer(app) }
        for await port in ports { return port }
        throw HarnessError("the scripted server did not start")
    }

    public func stop() { server.withLock { $0?.stop() } }

    /// How many frames the board sent that contain `text` (on script `n`'s connection, if given).
    public func count(_ text: String, on n: Int? = nil) -> Int {
        received.withLock { $0.filter { $0.text.contains(text) && (n == nil || $0.script == n) }.count }
    }

    /// A message.new frame.
    public static func new(_ m: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: ["type": "message.new", "messageID": m["id"]!, "message": m])
        return String(decoding: data, as: UTF8.self)
    }

    public static func inbox(_ messages: [[String: Any]]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: ["messages": messages]), as: UTF8.self)
    }

    public static func message(_ id: String, from sender: String, _ content: String, at t: Double = Date().timeIntervalSince1970) -> [String: Any] {
        ["id": id, "senderID": "id-\(sender)", "senderUsername": sender, "content": content, "contentType": "text", "timestamp": t]
    }
}
