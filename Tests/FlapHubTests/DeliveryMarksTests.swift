import Synchronization
import Testing
@testable import FlapHub

/// The queue of delivery marks: batches in order, a bounded queue that holds its adders back
/// rather than drop a mark, and an end that hands out what is left first.
@Suite struct DeliveryMarksTests {
    @Test func marksComeOutInOrderInBatchesOfTheLimit() async {
        let marks = DeliveryMarks()
        for i in 0..<450 { await marks.add("m\(i)") }
        marks.finish()
        var batches: [[String]] = []
        while let b = await marks.next() { batches.append(b) }
        #expect(batches.map(\.count) == [200, 200, 50])
        #expect(batches.flatMap { $0 } == (0..<450).map { "m\($0)" })
    }

    @Test func aFullQueueHoldsItsAddersUntilABatchIsTaken() async {
        let marks = DeliveryMarks(limit: 3)
        let added = Atomic<Int>(0)
        let adder = Task {
            for i in 0..<5 { await marks.add("m\(i)"); added.add(1, ordering: .relaxed) }
            marks.finish()
        }
        var all: [String] = []
        while let b = await marks.next() {
            // Never more queued than the limit, however the adder and this taker interleave.
            #expect(b.count <= 3)
            all += b
        }
        await adder.value
        #expect(all == (0..<5).map { "m\($0)" })
        #expect(added.load(ordering: .relaxed) == 5)
    }

    @Test func aTakerWaitsForTheFirstMark() async {
        let marks = DeliveryMarks()
        let taker = Task { await marks.next() }
        await marks.add("only")
        #expect(await taker.value == ["only"])
        marks.finish()
        #expect(await marks.next() == nil)
    }
}
