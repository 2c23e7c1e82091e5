import CRealtime
import Testing
@testable import FlapTiming

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

    @Test func waitingForACPUStopsTheSpinForAWhile() {
        var s = DeadlineSleeper(maxLead: 500_000)
        s.noticeWaiting(1_000_000)
        s.noticeWaiting(1_000_000 + DeadlineSleeper.contended)
        #expect(s.sleepOnly == 0 && s.backoffs == 0, "a CPU at hand: spin on")
        s.noticeWaiting(1_000_000 + 3 * DeadlineSleeper.contended)
        #expect(s.sleepOnly == 16 && s.backoffs == 1 && s.backoffLength == 32)
        // While it backs off it sleeps to each deadline, spinning none.
        let spunBefore = s.spun
        for i in 1...5 {
            let deadline = MonotonicClock.now() + Int64(i) * 200_000
            #expect(s.sleep(until: deadline) >= deadline)
        }
        #expect(s.spun == spunBefore && s.sleepOnly == 11)
    }

    @Test func backOffsDoubleWhileTheCPUStaysBusyAndShrinkWhenItIsFree() {
        var s = DeadlineSleeper(maxLead: 500_000)
        var total: Int64 = 0
        s.noticeWaiting(total)
        var lengths: [Int] = []
        for _ in 0..<8 {
            total += 2 * DeadlineSleeper.contended
            s.noticeWaiting(total)
            lengths.append(s.sleepOnly)
            var spun = 0
            while s.sleepOnly > 0 { if s.nextSpins() { spun += 1 } }
            let spinsAgain = s.nextSpins()
            #expect(spun == 0 && spinsAgain)
        }
        #expect(lengths == [16, 32, 64, 128, 256, 512, 1024, 1024])
        for _ in 0..<2000 { s.noticeWaiting(total) }
        #expect(s.backoffLength == 16)
    }

    @Test func aRealtimeThreadSpinsWhateverItWaited() {
        var s = DeadlineSleeper(maxLead: 500_000, backsOff: false)
        for i in 1...5 {
            let deadline = MonotonicClock.now() + Int64(i) * 200_000
            #expect(s.sleep(until: deadline) >= deadline)
        }
        #expect(s.backoffs == 0 && s.sleepOnly == 0)
    }

    @Test func aKernelThatDoesNotSayLeavesTheSpinOn() {
        var s = DeadlineSleeper(maxLead: 500_000)
        s.noticeWaiting(-1)
        s.noticeWaiting(9_000_000)
        #expect(s.sleepOnly == 0 && s.backoffs == 0)
    }

    @Test func theKernelSaysHowLongTheThreadWaitedForACPU() {
        #if os(Linux)
        #expect(flap_thread_runqueue_wait() >= 0)
        #endif
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
