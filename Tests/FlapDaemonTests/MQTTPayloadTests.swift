@testable import FlapLocalAPI
@testable import FlapMQTTBridge
import Foundation
import Testing
@testable import FlapDaemon

/// Issue 39, item 4: what an MQTT message topic takes is what the local API takes from the same
/// bytes — a payload that starts with `{` or `[` is a body (refused when it is not JSON, even
/// when a combining mark makes it one character with the brace), anything else the text of a
/// message, and bytes that are not UTF-8 are refused, never shown.
@Suite struct MQTTPayloadTests {
    func body(_ bytes: [UInt8]) -> Result<Data, LocalAPIError> { MQTTPayload.messageBody(bytes) }

    @Test func aBraceWithACombiningMarkIsABodyAndRefusedAsOne() {
        for text in ["{\u{301}\"text\": \"hi\"}", "[\u{300}[1, 2]]", "  {\u{20DD}"] {
            guard case .success(let b) = body(Array(text.utf8)) else { Issue.record("refused before the body: \(text)"); continue }
            #expect(b == Data(text.utf8), "taken as a body, as it is")
            guard case .failure(let e) = LocalPost.parse(b) else { Issue.record("shown: \(text)"); continue }
            #expect(e.message.hasPrefix("body is not JSON"), "\(e.message)")
        }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        for bytes: [UInt8] in [[0x48, 0x49, 0xFF], [0xC3], [0xE9, 0x74, 0xE9], [0xED, 0xA0, 0x80]] {
            #expect(body(bytes) == .failure(.badRequest("not UTF-8 text")), "\(bytes)")
        }
    }

    @Test func textAndBodiesAreTakenAsTheLocalAPITakesThem() throws {
        let text = try body(Array("Good morning".utf8)).get()
        #expect(try JSONSerialization.jsonObject(with: text) as? [String: String] == ["text": "Good morning"])
        #expect(try body(Array(" {\"text\": \"hi\"}".utf8)).get() == Data(" {\"text\": \"hi\"}".utf8))
        #expect(try JSONSerialization.jsonObject(with: body(Array("é {".utf8)).get()) as? [String: String] == ["text": "é {"])
        #expect(body([UInt8](repeating: 0x41, count: LocalAPI.maxBody + 1)) == .failure(.badRequest("larger than \(LocalAPI.maxBody) bytes")))
    }
}
