import Foundation
import Testing
@testable import FlapHub

/// A message's id is a UUID of version 7: the instant first, so ids made one after another sort
/// in that order (SQLite adds each at the end of the id's index), the rest random.
@Suite struct MessageIDTests {
    @Test func idsAreVersion7UUIDsInTheOrderTheyWereMade() throws {
        let start = 1_764_800_000.123
        // 2 ms apart: each in a millisecond of its own, however the sum rounds.
        let ids = (0..<1000).map { HubStore.newMessageID(at: start + Double($0) * 0.002) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let chars = Array(id)
            #expect(chars.count == 36 && [8, 13, 18, 23].allSatisfy { chars[$0] == "-" }, "\(id)")
            #expect(id.allSatisfy { $0 == "-" || $0.isHexDigit && !$0.isUppercase }, "\(id)")
            #expect(chars[14] == "7" && "89ab".contains(chars[19]), "version 7, RFC 9562's variant: \(id)")
            #expect(HubStore.isID(id) && UUID(uuidString: id) != nil)
        }
        #expect(ids.sorted() == ids, "sorted as made")
        // The first 48 bits are the instant in milliseconds.
        let ms = UInt64(ids[0].replacingOccurrences(of: "-", with: "").prefix(12), radix: 16)
        #expect(ms == UInt64(start * 1000))
        // Made in the same millisecond, they differ in their random bits.
        let same = (0..<1000).map { _ in HubStore.newMessageID(at: start) }
        #expect(Set(same).count == same.count)
        #expect(Set(same.map { $0.prefix(13) }).count == 1)
    }
}
