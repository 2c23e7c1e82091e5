import FlapCore
import FlapMessages
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

    /// Issue 15: a message may carry its transition and landing instant; a board keeps them.
    @Test func aMessageCarriesItsTransition() throws {
        let frame = #"{"type":"message.new","message":{"id":"m2","senderID":"s","senderUsername":"bob","content":"HI","contentType":"text","timestamp":5,"transition":{"strategy":"diagonal","step_size":2},"arriveAt":60}}"#
        guard case .new(let m) = try WireFrame.decode(frame) else { Issue.record("not a message"); return }
        #expect(m.inboxMessage.transition == TransitionFields(strategy: "diagonal", stepSize: 2))
        #expect(m.inboxMessage.arriveAt == 60)
        #expect(try WireFrame.decode(WireFrame.new(m).text) == .new(m))
    }

    @Test func whatIsWrongIsATypeNotText() {
        #expect(throws: WireFrame.UnknownType(type: "message.exploded")) { try WireFrame.decode(#"{"type":"message.exploded"}"#) }
        #expect { try WireFrame.decode(#"{"type":"message.deleted"}"#) } throws: { error in
            (error as? WireFrame.Invalid)?.type == "message.deleted"
        }
    }
}
