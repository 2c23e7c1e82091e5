import Synchronization
import Testing
@testable import FlapDoor

/// `withDeadline`: the answer and the deadline are one decision, never both.
@Suite struct DeadlineTests {
    @Test func anAnswerBeforeTheDeadlineIsTakenAndTheDeadlineNeverRuns() async throws {
        let ran = Atomic(false)
        let answer = try await withDeadline(after: .seconds(600), late: { ran.store(true, ordering: .relaxed) }) { 42 }
        #expect(answer == 42)
        let deadlineRan = ran.load(ordering: .relaxed)
        #expect(!deadlineRan)
    }

    /// The race a starved machine makes: the deadline rings (and closes the connection) and the
    /// answer comes in the same instant. Here the answer comes only once the deadline has run:
    /// it is dropped, so the caller never works on the connection the deadline closed.
    @Test func anAnswerThatComesAsTheDeadlineRingsIsDropped() async throws {
        let (rang, ring) = AsyncStream.makeStream(of: Void.self)
        let answer = try await withDeadline(after: .milliseconds(1), late: { ring.yield(); ring.finish() }) {
            for await _ in rang {}
            return 42
        }
        #expect(answer == nil)
    }
}
