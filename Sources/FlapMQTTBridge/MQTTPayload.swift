import FlapInput
import FlapLocalAPI
import FlapNet
import Foundation

/// What an MQTT message topic's payload is to the local API: the same bytes are taken, or
/// refused, as a local API post of them would be.
public enum MQTTPayload {
    /// The payload as the local API's body: as it is when its first byte past JSON's white space
    /// is `{` or `[` (as the local API reads it: `{` followed by a combining mark is JSON, and
    /// refused as such), else the text of a message. Refused when larger than the local API's
    /// body or not UTF-8.
    public static func messageBody(_ payload: [UInt8]) -> Result<Data, LocalAPIError> {
        guard payload.count <= LocalAPI.maxBody else { return .failure(.badRequest("larger than \(LocalAPI.maxBody) bytes")) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(.badRequest("not UTF-8 text")) }
        let first = StrictJSON.firstByte(of: payload)
        return .success(first == UInt8(ascii: "{") || first == UInt8(ascii: "[") ? Data(payload) : SortedJSON.data(encoding: ["text": text]))
    }
}
