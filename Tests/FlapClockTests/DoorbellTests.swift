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
}
