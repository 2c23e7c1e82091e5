import FlapMessages
import Foundation
import Testing
@testable import FlapHub

/// A send's answer and the relay's events, written directly (issue 37), are what their
/// `Encodable` definitions write: the answer the same text as `JSONEncoder` with sorted keys,
/// an event one that reads back the same.
@Suite struct HubJSONTextTests {
    static let awkward = ["alice", "ü/\"\\\n\u{1}🙂", "", "a/b"]

    @Test func aSendsAnswerIsWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (i, name) in Self.awkward.enumerated() {
            let outcomes: [HubReply.Sent.Outcome] = [
                .init(recipient: name, recipientID: "id-\(name)", status: .sent, messageID: "m/\(i)"),
                .refused(name, "not a friend: \(name)"),
            ]
            for sent in [HubReply.Sent(results: outcomes), HubReply.Sent(error: "no recipient could take the message: \(name)", results: outcomes),
                         HubReply.Sent(results: [])] {
                #expect(sent.json == String(decoding: try encoder.encode(sent), as: UTF8.self))
            }
        }
    }

    @Test func aRelayEventReadsBackAsItWas() {
        for name in Self.awkward {
            for event in [RelayEvent.frame(user: name, text: #"{"type":"x/\#(name)"}"#), .message(id: name, recipient: "r" + name, frame: name),
                          .message(id: name, recipient: name, frame: nil)] {
                #expect(RelayEvent.decode(event.json) == event, "\(event)")
            }
        }
    }

    /// A notification holds at most 8000 bytes: a new message's event too big for one is
    /// notified without its frame (each instance reads the message); one that fits keeps it.
    @Test func aNewMessageTooBigForANotificationIsNotifiedWithoutItsFrame() {
        let fits = RelayEvent.message(id: "m", recipient: "r", frame: String(repeating: "x", count: 7000))
        let big = RelayEvent.message(id: "m", recipient: "r", frame: String(repeating: "\"", count: 4000))
        #expect(RelayEvent.decode(fits.notice) == fits)
        #expect(RelayEvent.decode(big.notice) == .message(id: "m", recipient: "r", frame: nil), "4,000 quotes: 8,000 bytes once escaped")
        #expect(big.notice.utf8.count <= RelayEvent.maxEvent)
    }
}
