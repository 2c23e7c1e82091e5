import Testing
@testable import FlapClock

@Suite struct DoorbellTests {
    /// A deadline no `Duration` can hold (1e308 s: it traps past some 10²⁰) or none at all (NaN)
    /// is a wait like any other: a ring ends it.
    @Test(arguments: [1e308, .infinity, .nan, -1e308])
    func anyDeadlineIsAWaitARingEnds(seconds: Double) async {
        let bell = Doorbell()
        bell.ring()
        await bell.wait(seconds: seconds)
        #expect(Doorbell.longest == 1e9)
    }

    /// What each deadline waits: as asked within 0 … `longest`, the edges at the edges.
    @Test func aWaitIsTheDeadlineBroughtWithinItsBounds() {
        #expect(Doorbell.duration(2.5) == .milliseconds(2500))
        #expect(Doorbell.duration(1e9) == .seconds(1_000_000_000))
        #expect(Doorbell.duration(1e308) == .seconds(1_000_000_000))
        #expect(Doorbell.duration(.infinity) == .seconds(1_000_000_000))
        #expect(Doorbell.duration(-1e308) == .zero)
        #expect(Doorbell.duration(-.infinity) == .zero)
        #expect(Doorbell.duration(.nan) == .zero)
    }
}
