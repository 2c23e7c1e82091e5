import Testing
@testable import FlapClock

@Suite struct DeadlineSleeperTests {
    @Test func theLeadRisesToTheWorstOversleepAndDecays() {
        var s = DeadlineSleeper(maxLead: 500_000)
        #expect(s.lead == 50_000)
        s.learn(oversleep: 200_000)
        #expect(s.lead == 200_000 + DeadlineSleeper.margin)
        // A good wake-up lets the lead fall by a sixteenth, not at once.
        s.learn(oversleep: 1_000)
        #expect(s.lead == 220_000 - 220_000 / 16)
        // Never more than the most it may spin.
        s.learn(oversleep: 3_000_000)
        #expect(s.lead == 500_000)
        for _ in 0..<200 { s.learn(oversleep: 0) }
        #expect(s.lead == DeadlineSleeper.margin)
    }

    @Test func sleepOnlyNeverLeadsOrSpins() {
        var s = DeadlineSleeper(maxLead: 0)
        let deadline = MonotonicClock.now() + 2_000_000
        let woke = s.sleep(until: deadline)
        #expect(woke >= deadline)
        #expect(s.lead == 0 && s.spun == 0)
    }

    @Test func itNeverReturnsBeforeTheDeadline() {
        var s = DeadlineSleeper(maxLead: 2_000_000)
        for i in 1...20 {
            let deadline = MonotonicClock.now() + Int64(i) * 300_000
            #expect(s.sleep(until: deadline) >= deadline)
        }
    }
}
