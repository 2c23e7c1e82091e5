import FlapCore
import FlapMessages
import FlapWiring
import Foundation
import Testing
@testable import FlapNet

@Suite struct APIFrameTests {
    @Test func aNewMessageReads() throws {
        let text = #"{"type":"message.new","messageID":"m1","senderID":"s1","content":"HI","timestamp":5,"message":{"id":"m1","senderID":"s1","senderUsername":"alice","content":"HI","contentType":"text","timestamp":5,"unlockAt":9}}"#
        guard case .new(let m) = try APIFrame.decode(text).get() else { Issue.record("not message.new"); return }
        #expect(m.inboxMessage == InboxMessage(id: "m1", senderID: "s1", senderName: "alice", content: "HI", sentAt: 5, unlockAt: 9))
    }

    @Test func badFramesSayWhatWasWrong() {
        let cases: [(String, String)] = [
            ("not json", "not a JSON object"),
            ("[1,2]", "not a JSON object"),
            (#"{"no":"type"}"#, "no \"type\""),
            (#"{"type":"message.exploded"}"#, "unknown type 'message.exploded'"),
            (#"{"type":"message.new","message":{"id":"m1","senderID":"s1","senderUsername":"a","contentType":"text","timestamp":1}}"#,
             "missing 'message.content'"),
            (#"{"type":"message.new","message":{"id":"m1","senderID":"s1","senderUsername":"a","content":"x","contentType":"video","timestamp":1}}"#,
             "'message.contentType' is not valid"),
            (#"{"type":"message.new","message":{"id":7,"senderID":"s1","senderUsername":"a","content":"x","contentType":"text","timestamp":1}}"#,
             "'message.id' has the wrong type"),
            (#"{"type":"message.deleted"}"#, "without \"messageID\""),
        ]
        for (text, expected) in cases {
            switch APIFrame.decode(text) {
            case .success(let f): Issue.record("\(text) read as \(f)")
            case .failure(let p): #expect(p.description.contains(expected), "\(text): \(p)")
            }
        }
    }

    @Test func otherEventsAreKnown() throws {
        #expect(try APIFrame.decode(#"{"type":"authenticated","user":{}}"#).get() == .authenticated(pingSeconds: nil))
        // A server may ask for pings less often; a value of the wrong type is as none.
        #expect(try APIFrame.decode(#"{"type":"authenticated","user":{},"pingSeconds":90}"#).get() == .authenticated(pingSeconds: 90))
        #expect(try APIFrame.decode(#"{"type":"authenticated","pingSeconds":"often"}"#).get() == .authenticated(pingSeconds: nil))
        #expect(MessageAPIClient.pingSeconds(own: 20, asked: 90) == 90)
        #expect(MessageAPIClient.pingSeconds(own: 20, asked: 5) == 20)
        #expect(MessageAPIClient.pingSeconds(own: 1, asked: nil) == 1)
        #expect(MessageAPIClient.pingSeconds(own: 20, asked: 100_000) == 300)
        #expect(try APIFrame.decode(#"{"type":"pong"}"#).get() == .pong)
        #expect(try APIFrame.decode(#"{"type":"message.deleted","messageID":"m"}"#).get() == .deleted(messageID: "m"))
        #expect(try APIFrame.decode(#"{"type":"friend.accepted","friendID":"f"}"#).get() == .ignored(type: "friend.accepted"))
        #expect(try APIFrame.decode(#"{"type":"error","code":"x","message":"y"}"#).get() == .error(code: "x", message: "y"))
    }

    @Test func theBoardsFramesAreJSON() {
        #expect(OutgoingFrame.authenticate(token: "t\"k") == #"{"token":"t\"k","type":"authenticate"}"#)
        #expect(OutgoingFrame.displayed("m1") == #"{"messageID":"m1","type":"message.displayed"}"#)
    }
}

@Suite struct BackoffTests {
    @Test func delaysDoubleToThirtySecondsAndStartOverAfterAGoodConnection() {
        var exact = Backoff(random: { 0.5 })  // the middle of the jitter: no spread
        #expect((0..<8).map { _ in exact.next() } == [1, 2, 4, 8, 16, 30, 30, 30])
        exact.reset()
        #expect(exact.next() == 1)
        var low = Backoff(random: { 0 }), high = Backoff(random: { 0.999999 })
        #expect(abs(low.next() - 0.8) < 1e-9)
        #expect(abs(high.next() - 1.2) < 1e-5)
    }

    @Test func aStoppingServersBoardsComeBackSpreadOverTenSecondsThenDoubling() {
        var low = Backoff(random: { 0 }), high = Backoff(random: { 0.999999 }), middle = Backoff(random: { 0.5 })
        #expect(low.afterServerStop() == 0.5)
        #expect(abs(high.afterServerStop() - 10) < 1e-4)
        #expect(middle.afterServerStop() == 5.25)
        // The server was not back: the next attempts double from the first delay, as after any end.
        #expect((0..<3).map { _ in middle.next() } == [2, 4, 8])
        middle.reset()
        #expect(middle.next() == 1)
    }

    @Test func endpointsOfABaseURL() {
        #expect(MessageAPIConfig.endpoints(of: "https://hub.example.org/")! == ("wss://hub.example.org/ws", "https://hub.example.org/api/v1/messages/inbox"))
        #expect(MessageAPIConfig.endpoints(of: "http://127.0.0.1:8080")!.webSocket == "ws://127.0.0.1:8080/ws")
        #expect(MessageAPIConfig.endpoints(of: "ftp://x") == nil)
        #expect(MessageAPIConfig.endpoints(of: "https://") == nil)
    }
}

@Suite struct SortedJSONTests {
    struct Inner: Encodable { let z = 1; let a: Int? = nil; let m = ["b": 2, "B": 1] }
    struct Outer: Encodable {
        let b = [Inner()]; let a = "x\"y"; let B = [2.5]; let é = [String: Int]()
        enum CodingKeys: String, CodingKey { case b, a, B, é }
    }

    @Test func keysInCodePointOrderAtEveryDepth() {
        #expect(SortedJSON.string(encoding: Outer()) == #"{"B":[2.5],"a":"x\"y","b":[{"m":{"B":1,"b":2},"z":1}],"é":{}}"#)
        #expect(SortedJSON.string(encoding: ["path": "/a/b"]) == #"{"path":"/a/b"}"#)
    }
}
