import FlapClock
import FlapCore
import FlapTiming
import Synchronization
import Testing
import TestWaits
@testable import FlapGPIO

/// Issue 35, item 1, at the driver: a module turned on by steps and marked with the flap it
/// shows gets the offset the drum really has, lands where the board wants it, and moves right
/// from then on; what cannot be calibrated now is refused, saying why.
@Suite struct CalibrationTests {
    let wiring = HomingTests().wiring
    let geometry = HomingTests().geometry  // 40 steps, 10 flaps: 4 steps a flap

    final class Landings: HomingReport {
        let all = Mutex<[(module: Int, flap: Int?)]>([])
        func landed(board: Int, module: Int, flap: Int?, flaps: Int) { all.withLock { $0.append((module, flap)) } }
        var count: Int { all.withLock { $0.count } }
    }

    /// One module on a drum at step 17, with a home sensor and offset 5, started to show flap 3
    /// (not homed yet); the caller stops it.
    func started(_ drum: SimulatedDrum) -> GPIODriver {
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [5]))
        driver.start(targets: [3])
        return driver
    }

    @Test func aMarkSavesTheOffsetTheDrumHasAndTheModuleMovesRightAfter() async throws {
        // The drum's flap 0 is 7 steps past its magnet; the driver believes 5.
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = started(drum)
        defer { driver.stop() }
        driver.homeAll()
        #expect(await eventually { driver.idle })
        // Homed by the old offset: 5 + 12 past the magnet, where the drum shows flap 2 (7 + 8 ≤ 17 < 7 + 12).
        #expect(drum.position == 57 && driver.calibrationPlace(of: 0) == .init(place: 12, stepsFromMagnet: 17, offset: 5))
        let landings = Landings()
        try driver.nudge(board: 0, module: 0, steps: 2, report: landings)
        #expect(await eventually { driver.idle && landings.count == 1 })
        // Two steps on, flap 3 has just fallen: the maker says so.
        #expect(drum.position == 59)
        let offset = try driver.mark(board: 0, module: 0, showing: 3, report: landings)
        #expect(offset == 7 && driver.calibrationPlace(of: 0) == .init(place: 12, stepsFromMagnet: 19, offset: 7))
        #expect(await eventually { driver.idle && landings.count == 2 })
        #expect(drum.position == 59 && landings.all.withLock { $0.last?.flap } == 3, "it shows its target already: it stays")
        // From now on it moves by the true offset: to flap 8, 20 steps, the drum at 7 + 32.
        driver.planned(board: 0, plan: HomingTests().plan(to: 8, from: 3, flips: 5), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position == 79 && driver.health?.first?.failures == 0)
        // A new homing uses it too: the magnet, then 7 and 32 on.
        driver.homeAll()
        #expect(await eventually { driver.idle && driver.health?.first?.state == .normal })
        #expect(drum.position % 40 == 39)
    }

    @Test func whatCannotBeCalibratedNowIsRefusedSayingWhy() async throws {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = started(drum)
        defer { driver.stop() }
        let landings = Landings()
        #expect(throws: GPIODriver.CalibrationRefusal.notHomed(0)) { _ = try driver.mark(board: 0, module: 0, showing: 3, report: landings) }
        #expect(throws: GPIODriver.CalibrationRefusal.noSuchModule(1)) { try driver.nudge(board: 0, module: 1, steps: 1, report: landings) }
        #expect(throws: GPIODriver.CalibrationRefusal.noSuchModule(0)) { try driver.nudge(board: 1, module: 0, steps: 1, report: landings) }
        #expect(GPIODriver.CalibrationRefusal.notHomed(0).description.contains("home it first"))
        // A module with steps still to take is busy (a driver never started keeps them).
        let unstarted = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        try unstarted.nudge(board: 0, module: 0, steps: 2, report: landings)
        #expect(throws: GPIODriver.CalibrationRefusal.busy(0)) { try unstarted.nudge(board: 0, module: 0, steps: 1, report: landings) }
        drum.breakSensor()
        driver.homeAll()
        #expect(await eventually { driver.idle && driver.health?.first?.state == .faulty })
        #expect(throws: GPIODriver.CalibrationRefusal.faulty(0)) { try driver.nudge(board: 0, module: 0, steps: 1, report: landings) }
        #expect(landings.count == 0 && drum.position == 17 + 3 * 61, "nothing moved for a refused request")
    }

    /// A module without a home sensor: the mark sets the flap it shows (no offset), and the
    /// module turns on to the one it should show.
    @Test func withoutASensorAMarkSetsTheFlapItShows() async throws {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 0)
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.start(targets: [3], positions: [3])
        defer { driver.stop() }
        let landings = Landings()
        #expect(try driver.mark(board: 0, module: 0, showing: 1, report: landings) == nil)
        #expect(await eventually { driver.idle && landings.count == 1 })
        #expect(drum.position == 8 && landings.all.withLock { $0.first?.flap } == 3, "from flap 1 to 3: 8 steps")
        #expect(driver.calibrationPlace(of: 0) == .init(place: 12, stepsFromMagnet: nil, offset: nil))
    }
}
