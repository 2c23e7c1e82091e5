import Logging
import WSClient

/// One WebSocket client of flaphub: authenticates, keeps every frame, and answers each frame with
/// what `replies` returns for it (a board's `message.displayed`, say).
public final class SocketWatch: Sendable {
    private let seen = Seen()
    private let task: Task<Void, any Error>
    private let signal: AsyncStream<Void>.Continuation
    private let changes: AsyncStream<Void>

    /// A board that shows every new message at once: `message.displayed` for each `message.new`.
    public static let displaysEveryMessage: @Sendable (String) -> [String] = { frame in
        guard frame.contains("message.new"), let id = frame.firstMatch(of: /"messageID":"([^"]+)"/)?.1 else { return [] }
        return [#"{"type":"message.displayed","messageID":"\#(id)"}"#]
    }

    /// Whether `frame` is the hub's answer to a good `authenticate`.
    public static func isAuthenticated(_ frame: String) -> Bool { frame.contains("\"type\":\"authenticated\"") }

    init(port: Int, token: String, replies: @escaping @Sendable (String) -> [String]) {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        (self.changes, self.signal) = (changes, signal)
        let seen = self.seen
        task = Task {
            // However the socket ends (refused, closed, cancelled), `wait` then says so at once.
            defer { signal.finish() }
            // Frames up to the hub's 64 KiB (a VBML message of 8 KiB is more than WSClient's 16 KiB).
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/ws", configuration: .init(maxFrameSize: 1 << 16),
                                              logger: Logger(label: "test")) { inbound, outbound, _ in
                try await outbound.write(.text(#"{"type":"authenticate","token":"\#(token)"}"#))
                for try await m in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let t) = m else { continue }
                    seen.all.withLock { $0.append(t) }
                    signal.yield()
                    for reply in replies(t) { try await outbound.write(.text(reply)) }
                }
            }
        }
    }

    /// A watch whose socket has authenticated, or nil. On a starved machine a hub may read a
    /// socket's `authenticate` after its 10 s deadline and close it (`socket closed: no
    /// authenticate frame within 10 s`), as its door must: a board then connects again (flapd,
    /// with its backoff), and so does this — up to five times. Nothing is replied before
    /// `authenticated`, so a socket that ended sent nothing but its `authenticate`.
    public static func authenticated(port: Int, token: String,
                                     replies: @escaping @Sendable (String) -> [String] = { _ in [] }) async -> SocketWatch? {
        for _ in 1...5 {
            let watch = SocketWatch(port: port, token: token, replies: replies)
            if await watch.wait(isAuthenticated) { return watch }
            watch.stop()
        }
        return nil
    }

    /// Every text frame the hub sent so far, in order.
    public var frames: [String] { seen.all.withLock { $0 } }

    /// Whether a frame satisfying `condition` came (now or later); false once the socket ends.
    /// One wait at a time: the frames' signal is one `AsyncStream`, and two tasks awaiting it at
    /// once trap.
    public func wait(_ condition: (String) -> Bool) async -> Bool {
        var iterator = changes.makeAsyncIterator()
        while !frames.contains(where: condition) {
            guard await iterator.next() != nil else { return false }
        }
        return true
    }

    /// Closes the socket; a `wait` in progress returns.
    public func stop() { task.cancel(); signal.finish() }
}
