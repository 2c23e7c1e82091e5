import Foundation
import Hummingbird
import NIOCore

/// The hub's JSON answers, as values (`reply` encodes them, keys sorted).
enum HubReply {
    /// Every error answer: `{"error": …}`.
    struct Failure: Encodable {
        let error: String
    }

    /// `POST /api/v1/messages`: one outcome per recipient, and an error when none could take it.
    struct Sent: Encodable {
        var error: String?
        var results: [Outcome]

        /// What became of the message for one recipient.
        struct Outcome: Encodable {
            enum Status: String, Encodable { case sent, refused }
            let recipient: String
            var recipientID: String?
            let status: Status
            var messageID: String?
            var error: String?

            static func refused(_ recipient: String, _ why: String) -> Outcome { Outcome(recipient: recipient, status: .refused, error: why) }
        }
    }

    /// A JSON answer of `value` with `status` (and `headers` beyond its content type).
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var fields = headers
        fields[.contentType] = "application/json"
        // What the hub encodes are strings, numbers and arrays of them: encoding cannot fail.
        let body = (try? encoder.encode(value)) ?? Data(#"{"error":"internal error"}"#.utf8)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `{"error": message}` with `status`.
    static func failure(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        response(status, Failure(error: message), headers: headers)
    }
}
