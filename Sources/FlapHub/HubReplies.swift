import FlapMessages
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

        /// What `encode(to:)` writes with `.sortedKeys`.
        var json: String {
            var sent = JSONObjectText(escapingSlashes: true)
            sent.add("error", error)
            sent.add("results", results.map { r in
                var o = JSONObjectText(escapingSlashes: true)
                o.add("recipient", r.recipient); o.add("recipientID", r.recipientID); o.add("status", r.status.rawValue)
                o.add("messageID", r.messageID); o.add("error", r.error)
                return o
            })
            return sent.text
        }
    }

    /// A JSON answer of `value` with `status` (and `headers` beyond its content type).
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // What the hub encodes are strings, numbers and arrays of them: encoding cannot fail.
        let body = (try? encoder.encode(value)) ?? Data(#"{"error":"internal error"}"#.utf8)
        return response(status, json: ByteBuffer(bytes: body), headers: headers)
    }

    /// A send's answer: the text `Encodable` writes, written directly (every send has one, issue 37).
    static func response(_ status: HTTPResponse.Status, _ sent: Sent) -> Response {
        response(status, json: ByteBuffer(string: sent.json))
    }

    private static func response(_ status: HTTPResponse.Status, json body: ByteBuffer, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: body))
    }

    /// `{"error": message}` with `status`.
    static func failure(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        response(status, Failure(error: message), headers: headers)
    }
}
