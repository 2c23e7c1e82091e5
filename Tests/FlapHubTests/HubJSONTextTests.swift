import FlapHubInput
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

    @Test func aRelayEventReadsBackAsItWas() throws {
        for name in Self.awkward + ["5:x", "F1:", "a:b:c"] {
            for event in [RelayEvent.frame(user: name, text: #"{"type":"x/\#(name)"}"#), .frame(user: name, text: ""),
                          .message(id: name, recipient: "r" + name, frame: name), .message(id: name, recipient: name, frame: nil),
                          .message(id: "", recipient: "", frame: "")] {
                #expect(RelayEvent.read(Substring(event.notice)) == event, "\(event)")
                // An instance before this notice format sent the event's JSON: still read.
                #expect(RelayEvent.read(Substring(String(decoding: try JSONEncoder().encode(event), as: UTF8.self))) == event, "\(event)")
            }
        }
        #expect(RelayEvent.message(id: "m", recipient: "u", frame: #"{"a":"b\"c"}"#).notice == #"M1:m1:u{"a":"b\"c"}"#, "the frame as it is")
    }

    /// A notice that is not one — cut short, a length past its end or not a number, an unknown
    /// kind, `m` with a frame after it — reads as nothing, never as part of an event.
    @Test func aBrokenNoticeReadsAsNothing() {
        for broken in ["", "X1:a", "F", "F:a", "F2:a", "F-1:a", "F+1:a", "F123456:a", "M1:m", "M1:m2:u", "m1:m1:u{}", "M1:m1u", "{", "{\"frame\":1}"] {
            #expect(RelayEvent.read(Substring(broken)) == nil, "\(broken)")
        }
        // The hub-notice fuzzer's find (Foundation's decoder trapped on it: a deadly signal, not
        // an error), and JSON deeper than an event's ever is.
        let found = [110, 27, 222, 150].map { #"{"messpient":"# + String(repeating: "[", count: $0) }.joined()
        for deep in [found, #"{"frame":{"user":{"a":{"b":{"c":1}}}}}"#] {
            #expect(RelayEvent.read(Substring(deep)) == nil)
        }
    }

    /// A notification holds at most 8000 bytes: a new message's event too big for one is
    /// notified without its frame (each instance reads the message); one that fits keeps it.
    @Test func aNewMessageTooBigForANotificationIsNotifiedWithoutItsFrame() {
        let fits = RelayEvent.message(id: "m", recipient: "r", frame: String(repeating: "\"", count: 7800))
        let big = RelayEvent.message(id: "m", recipient: "r", frame: String(repeating: "x", count: 7900))
        #expect(RelayEvent.read(Substring(fits.notice)) == fits, "nothing is escaped: 7,800 quotes fit")
        #expect(RelayEvent.read(Substring(big.notice)) == .message(id: "m", recipient: "r", frame: nil))
        #expect(fits.notice.utf8.count <= RelayEvent.maxEvent && big.notice.utf8.count <= RelayEvent.maxEvent)
    }
}
