import FlapCore
import Foundation
import Testing

/// Issue 13, item 3: the message API's frames have one Codable definition, which flaphub writes
/// with and flapd reads with — every frame reads back as what was written.
@Suite struct WireFrameTests {
    static let message = APIMessage(id: "m1", senderID: "s1", senderUsername: "alice", content: "HI / THERE", timestamp: 5, unlockAt: 9)

    @Test func everyFrameReadsBackAsWritten() throws {
        let frames: [WireFrame] = [
            .authenticate(token: "t\"k"), .ping, .displayed(messageID: "m1"), .displayed(messageID: "m1", recipientID: "r"),
            .authenticated(user: .init(id: "u", username: "board")), .pong, .new(Self.message), .deleted(messageID: "m1"),
            .delivered(messageID: "m1", recipientID: "r"), .friendRequest(requestID: "q", fromUser: .init(id: "a", username: "alice")),
            .friendAccepted(friendID: "f"), .error(code: "bad_frame", message: "no"),
        ]
        for frame in frames {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(frame.text.utf8)) as? [String: Any])
            #expect(object["type"] as? String == frame.type)
            #expect(try WireFrame.decode(frame.text) == frame, "\(frame.text)")
        }
    }

    @Test func aNewMessageKeepsTheSeedsFlatFieldsBesideTheMessage() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(WireFrame.new(Self.message).text.utf8)) as? [String: Any])
        #expect(object["messageID"] as? String == "m1" && object["senderID"] as? String == "s1" && object["content"] as? String == "HI / THERE")
        #expect(object["timestamp"] as? Double == 5 && object["unlockAt"] as? Double == 9)
        #expect((object["message"] as? [String: Any])?["senderUsername"] as? String == "alice")
    }

    @Test func whatIsWrongIsATypeNotText() {
        #expect(throws: WireFrame.UnknownType(type: "message.exploded")) { try WireFrame.decode(#"{"type":"message.exploded"}"#) }
        #expect { try WireFrame.decode(#"{"type":"message.deleted"}"#) } throws: { error in
            (error as? WireFrame.Invalid)?.type == "message.deleted"
        }
    }
}
