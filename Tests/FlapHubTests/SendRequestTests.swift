import FlapHubInput
import Foundation
import Testing

/// flaphub's send body: numbers and booleans are told apart as JSON has them (on Linux an
/// NSNumber 0 or 1 is also a Bool, and `true` also a number, to Swift's casts).
@Suite struct SendRequestTests {
    func read(_ json: String) -> Result<SendRequest, HubError> {
        do throws(HubError) {
            return .success(try SendRequest.read(try SendRequest.object(Array(json.utf8)), now: 1_800_000_000, ttl: 172_800))
        } catch { return .failure(error) }
    }

    func refusal(_ json: String) -> String? {
        if case .failure(let e) = read(json) { return e.description }
        return nil
    }

    @Test func numbersAndBooleansAreWhatJSONSays() throws {
        let base = #""recipients": ["board"], "content": "hi""#
        #expect(try read("{\(base), \"arriveAt\": 1}").get().options.arriveAt == 1, "1 is a number, not true")
        #expect(try read("{\(base), \"arriveAt\": 0}").get().options.arriveAt == 0)
        #expect(try read("{\(base), \"forced\": true}").get().options.forced == true)
        #expect(try read("{\(base), \"forced\": false}").get().options.forced == false)
        #expect(refusal("{\(base), \"forced\": 1}") == #""forced" must be true or false"#)
        #expect(refusal("{\(base), \"forced\": 0}") == #""forced" must be true or false"#)
        #expect(refusal("{\(base), \"arriveAt\": true}") == #""arriveAt" must be a number of seconds"#)
        #expect(refusal("{\(base), \"duration\": true}") == #""duration" must be a number of seconds"#)
        #expect(refusal("{\(base), \"unlockAt\": true}") == #""unlockAt" must be seconds since 1970"#)
    }
}
