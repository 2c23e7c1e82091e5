import FlapCore
import FlapInput
import FlapMessages
import Foundation

/// What flaphub reads from outside, as pure functions of the bytes (no I/O, no server): the
/// limits a request body and a WebSocket frame are checked against, and a board's frame read.
/// `SendRequest`, `MessageRules` and `PostgresSettings` are the rest of this module; the fuzzer
/// links it without the server's graph.
public enum HubInput {
    /// What a request body and a WebSocket frame may hold.
    public static let bodyLimits = JSONLimits(maxBytes: 64 * 1024, maxDepth: 8)
    public static let frameLimits = JSONLimits(maxBytes: 64 * 1024, maxDepth: 8)

    /// A client's frame: strict JSON within `frameLimits`, then a `WireFrame`.
    public static func checkedFrame(_ text: String) throws -> WireFrame {
        try StrictJSON.check(Array(text.utf8), limits: frameLimits)
        return try WireFrame.decode(text)
    }

    /// A client's frame, or nil when it is not one.
    public static func frame(_ text: String) -> WireFrame? { try? checkedFrame(text) }

    /// Why a client's frame was refused, in words for the `error` event.
    public static func problem(_ error: any Error) -> String {
        switch error {
        case let e as WireFrame.UnknownType: "unknown type '\(e.type.prefix(40))'"
        case let e as WireFrame.Invalid:
            if case .keyNotFound(let key, _)? = e.cause as? DecodingError { "\(e.type) needs \"\(key.stringValue)\"" } else { "\(e.type): a field has the wrong type" }
        case DecodingError.keyNotFound(let key, _) where key.stringValue == "type": "expected a JSON object with a \"type\""
        default: "expected a JSON object with a \"type\""
        }
    }
}
