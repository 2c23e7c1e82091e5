/// Where the message API is and how to talk to it.
public struct MessageAPIConfig: Sendable, Equatable {
    /// The base URL, `https://…` or `http://…`; the WebSocket is `…/ws`.
    public var url: String
    /// The board's bearer token. Never logged.
    public var token: String
    /// How often to send `ping`; a server silent for three of these is taken for dead.
    public var pingSeconds: Double = 20
    /// The largest WebSocket frame taken; a larger one ends the connection (then reconnect).
    public var maxFrameBytes = 64 * 1024

    public init(url: String, token: String) {
        self.url = url
        self.token = token
    }

    /// The WebSocket and inbox URLs of a base URL, or nil when it is not http(s).
    public static func endpoints(of url: String) -> (webSocket: String, inbox: String)? {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        let ws: String
        if base.hasPrefix("https://") { ws = "wss://" + base.dropFirst(8) }
        else if base.hasPrefix("http://") { ws = "ws://" + base.dropFirst(7) }
        else { return nil }
        guard base.split(separator: "/").count >= 2 else { return nil }
        return (ws + "/ws", base + "/api/v1/messages/inbox")
    }

    public var endpoints: (webSocket: String, inbox: String) { Self.endpoints(of: url)! }
}
