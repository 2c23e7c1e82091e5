import AsyncHTTPClient
import FlapMessages
import FlapNet
import Foundation
import Logging
import NIOCore
import Synchronization
import WSClient

/// One of the bench's boards, doing to flaphub what flapd does: authenticates, pings every
/// `ping` seconds (its first at a random instant within them, as boards started at different
/// times would), and when its connection ends while the bench runs, reconnects after flapd's own
/// delays (`FlapNet.Backoff`: 1, 2, 4 … s, each ±20 %; after a server's 1001, anywhere in 10 s)
/// and reads its inbox, as flapd catches up.
/// It does not report messages displayed, so that the figures stay those of earlier runs.
struct BenchBoard {
    let url: String, inbox: String, token: String, ping: Double
    let shared: BoardsShared, client: HTTPClient

    /// Runs until cancelled.
    func run() async {
        var backoff = Backoff(), connections = 0
        while !Task.isCancelled {
            let reconnected = connections > 0
            shared.attempts.withLock { $0.append(.now) }
            let authenticated = Authenticated()
            let close = try? await WebSocketClient.connect(url: url, logger: Logger(label: "board")) { inbound, outbound, _ in
                try await outbound.write(.text(#"{"type":"authenticate","token":"\#(token)"}"#))
                // Made once a connection: a regex literal is parsed again each time it is evaluated.
                let content = /"content":"([MR]\d+)"/
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if ping > 0 {
                        // flapd's own bytes (the hub answers exactly these without parsing them).
                        let frame = WireFrame.ping.text, every = ping
                        group.addTask {
                            try await Task.sleep(for: .seconds(Double.random(in: 0..<every)))
                            while true {
                                try await outbound.write(.text(frame))
                                try await Task.sleep(for: .seconds(every))
                            }
                        }
                    }
                    for try await m in inbound.messages(maxSize: 1 << 16) {
                        guard case .text(let t) = m else { continue }
                        if t.contains("\"authenticated\"") {
                            authenticated.yes.store(true, ordering: .relaxed)
                            shared.online.add(1, ordering: .relaxed)
                            shared.authentications.withLock { $0.append(.now) }
                            if reconnected { await readInbox(content) }
                        }
                        shared.received(t, content)
                    }
                    group.cancelAll()
                }
            }
            if authenticated.yes.load(ordering: .relaxed) {
                shared.online.subtract(1, ordering: .relaxed)
                connections += 1
                backoff.reset()
            }
            let delay = close?.closeCode == .goingAway ? backoff.afterServerStop() : backoff.next()
            do { try await Task.sleep(for: .seconds(delay)) } catch { return }
        }
    }

    /// The inbox after a reconnect: what came while the board was away.
    func readInbox(_ content: Regex<(Substring, Substring)>) async {
        var request = HTTPClientRequest(url: inbox)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        guard let r = try? await client.execute(request, timeout: .seconds(30)),
              let body = try? await r.body.collect(upTo: 8 << 20) else { return }
        shared.received(String(buffer: body), content)
    }
}

/// Whether a connection authenticated (an atomic is not copied into a closure: a class holds it).
final class Authenticated: Sendable { let yes = Atomic<Bool>(false) }

/// What the boards and senders share.
final class BoardsShared: Sendable {
    let sent = Mutex<[String: UInt64]>([:])
    let latencies = Mutex<[Double]>([])
    /// Boards authenticated and still connected.
    let online = Atomic<Int>(0)
    let counter = Atomic<Int>(0)
    /// Every connection attempt and every authentication, when (the restart's curve).
    let attempts = Mutex<[ContinuousClock.Instant]>([])
    let authentications = Mutex<[ContinuousClock.Instant]>([])
    /// Messages `R…` (the restart's) that a board received, live or in its inbox.
    let survivors = Mutex<Set<String>>([])

    /// A frame or an inbox a board received (`content` finds its messages): the latency of each
    /// `M…` message in it, every `R…` kept.
    func received(_ text: String, _ content: Regex<(Substring, Substring)>) {
        guard text.contains("\"content\"") else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        // A message's content may be in its frame more than once (its preview): each counts once.
        for c in Set(text.matches(of: content).map { String($0.1) }) {
            if c.hasPrefix("R") { survivors.withLock { _ = $0.insert(c) }; continue }
            if let start = sent.withLock({ $0[c] }) {
                latencies.withLock { $0.append(Double(now - start) / 1e6) }
            }
        }
    }
}
