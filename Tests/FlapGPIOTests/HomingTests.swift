import FlapWiring
import FlapClock
import FlapTiming
import Foundation
import Synchronization
import Testing
import TestWaits
@testable import FlapCore
@testable import FlapGPIO

@Suite struct HomingTests {
    let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1], pulseNanos: 1_000_000)))
    let geometry = StepGeometry(stepsPerRevolution: 40, flaps: 10)  // 4 steps a flap


    func plan(to flap: UInt8, from: UInt8, flips: Int32) -> FlipPlan {
        FlipPlan(rows: 1, cols: 1, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 0),
                 moves: [ModuleMove(row: 0, col: 0, from: from, to: flap, flips: flips, direction: 1, start: 0)])
    }

    /// A one-module driver on `drum`, homed at start (`offset` from its magnet to flap 0, to
    /// flap `target`); the caller stops it.
    func homedDriver(_ drum: SimulatedDrum, offset: Int, target: UInt8) async -> GPIODriver {
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [offset]))
        driver.start(targets: [target])
        driver.homeAll()
        #expect(await eventually { driver.idle })
        return driver
    }

    @Test func homingTurnsToTheMagnetThenByTheOffsetToWhereTheModuleShouldBe() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = await homedDriver(drum, offset: 5, target: 3)
        defer { driver.stop() }
        // 23 steps to the magnet (17 → 40), then 5 to flap 0 and 12 to flap 3.
        #expect(drum.position == 40 + 5 + 12 && driver.stats.steps == 23 + 17)
        #expect(driver.health == [.init(state: .normal, missed: 0, unexpected: 0, failures: 0)])
        // A move of a turn and a half passes the magnet once, where it should: no failure.
        driver.planned(board: 0, plan: plan(to: 8, from: 3, flips: 15), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position == 57 + 60 && driver.health?.first?.state == .normal && driver.health?.first?.failures == 0)
    }

    /// An offset as a hand may write it in `calibration.json` — a turn and more off, below zero,
    /// Int.max — is the same place on the drum: homing ends where offset 5 ends (Int.max is 7
    /// steps on a turn of 40), not after 10¹² steps or an overflow on the step thread.
    @Test(arguments: [5 + 40 * 1_000_000_000_000, 5 - 40 * 3, Int.max])
    func anOffsetPastATurnIsThePlaceOnTheDrum(offset: Int) async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = await homedDriver(drum, offset: offset, target: 3)
        defer { driver.stop() }
        let onTurn = offset == Int.max ? 7 : 5
        #expect(drum.position == 40 + onTurn + 12 && driver.stats.steps == 23 + onTurn + 12)
    }

    /// Issue 35: a drum that lost a step meets its magnet a step late at its next pass; the
    /// driver makes it good at once (one step more), so the module still lands on its flap, and
    /// the error is kept for diagnostics.
    @Test func aSlipWithinAQuarterFlapIsMadeGoodAtTheNextPass() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = await homedDriver(drum, offset: 5, target: 3)
        defer { driver.stop() }
        #expect(drum.position == 57)
        drum.slip(1)
        driver.planned(board: 0, plan: plan(to: 8, from: 3, flips: 15), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position == 57 + 60 && driver.stats.steps == 40 + 61, "\(drum.position - 117) steps off")
        #expect(driver.health == [.init(state: .normal, missed: 0, unexpected: 0, failures: 0, magnetErrors: [1])])
        // The next move starts from the flap the module shows: no error, no step too many.
        driver.planned(board: 0, plan: plan(to: 2, from: 8, flips: 4), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position == 117 + 8 + 2 * 4 && driver.health?.first?.magnetErrors == [1, 0], "\(String(describing: driver.health))")
    }

    /// Issue 35: a slip of more than a quarter flap is not made good in place: the module is
    /// homed again, and still ends on its flap.
    @Test func aSlipOfMoreThanAQuarterFlapHomesTheModuleAgain() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = await homedDriver(drum, offset: 5, target: 3)
        defer { driver.stop() }
        drum.slip(3)
        driver.planned(board: 0, plan: plan(to: 8, from: 3, flips: 15), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position % 40 == (5 + 32) % 40, "\(drum.position % 40 - 37) steps off")
        #expect(driver.health == [.init(state: .normal, missed: 0, unexpected: 1, failures: 1, magnetErrors: [3])])
    }

    /// Issue 18: under load the sensor's edge was read two steps late and the module ended two
    /// steps past its flap. The edge's own instant places the magnet.
    @Test func anEdgeReadLateStillPlacesTheMagnetWhereItWas() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17, lag: 3)
        let driver = await homedDriver(drum, offset: 5, target: 3)
        defer { driver.stop() }
        #expect(drum.position == 40 + 5 + 12, "\(drum.position - 57) steps off")
        // Late pulses of later turns are placed by their instants too: no failure.
        driver.planned(board: 0, plan: plan(to: 8, from: 3, flips: 25), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        #expect(drum.position == 57 + 100 && driver.health == [.init(state: .normal, missed: 0, unexpected: 0, failures: 0, magnetErrors: [0, 0])],
                "\(drum.position) \(String(describing: driver.health))")
    }

    /// An offset shorter than the lag: the module has passed flap 0 already and goes round —
    /// and the log says why the turn was longer than one to the magnet.
    @Test func anEdgeReadLaterThanTheOffsetGoesRoundOnce() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 30, lag: 4)
        let said = Mutex<[String]>([])
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum,
                                log: { note in said.withLock { $0.append(note) } })
        driver.attach(.init(inputs: drum, offsets: [2]))
        driver.start(targets: [0])
        defer { driver.stop() }
        driver.homeAll()
        #expect(await eventually { driver.idle })
        #expect(drum.position == 40 + 40 + 2, "\(String(describing: driver.health)) \(driver.stats)")
        let notes = said.withLock { $0 }
        #expect(notes.contains { $0.hasPrefix("module 0,0 met its magnet") && $0.hasSuffix("past the flap to land on: on round to it") }, "\(notes)")
    }

    @Test func aBrokenSensorIsMissedThenNotFoundThenTheModuleIsFaulty() async {
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 38)
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [4], maxFailures: 2))
        driver.start(targets: [0])
        defer { driver.stop() }
        driver.homeAll()
        // On flap 0, 4 steps past the magnet (a turn later if the edge was read more than 4
        // steps late on a loaded machine: the drum only turns forward).
        #expect(await eventually { driver.idle } && drum.position % 40 == 4, "\(drum.position)")
        drum.breakSensor()
        driver.planned(board: 0, plan: plan(to: 2, from: 0, flips: 12), transitionStart: MonotonicClock.now())
        // Passing the magnet without a pulse: missed; the homing turn finds none: faulty.
        #expect(await eventually { driver.health?.first?.state == .faulty })
        #expect(await eventually { driver.idle })
        let h = driver.health?.first
        #expect(h?.missed == 1 && h?.failures == 2, "\(String(describing: h))")
        let still = drum.position
        driver.planned(board: 0, plan: plan(to: 5, from: 2, flips: 3), transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle } && drum.position == still, "a faulty module is left still")
    }

    @Test func homingTurnsOfAPowerGroupGoOneBatchAtATime() async {
        let two = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], pulseNanos: 1_000_000)))
        let drum = SimulatedDrum(steps: 40, magnet: 0, positions: [30, 25])
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: two, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [8, 8], powerGroups: [PowerGroup(rows: 0...0, cols: 0...1, maxMoving: 1)]))
        driver.start(targets: [1, 1])
        defer { driver.stop() }
        driver.homeAll()
        #expect(await eventually { driver.idle })
        // Module 0: 10 steps to its magnet, 8 to flap 0 and 4 to flap 1; then module 1: 15,
        // 8 and 4. Never both.
        #expect(drum.log == Array(repeating: 0, count: 22) + Array(repeating: 1, count: 27), "\(drum.log)")
        #expect(drum.positions == [52, 52])
    }

    /// Issue 12: after a restart only the modules whose place the step journal did not know (a
    /// kill caught them homing) are homed; the others stay where the journal says.
    @Test func onlyTheModulesTheJournalLostAreHomed() async throws {
        let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).bin"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let before = try #require(StepJournal(path: path, modules: 2, stepsPerRevolution: 40))
            before.set(0, 8)    // on flap 2
            before.set(1, nil)  // caught in a homing turn
        }
        let journal = try #require(StepJournal(path: path, modules: 2, stepsPerRevolution: 40))
        #expect(journal.restored.map { $0.map { $0 ?? -1 } } == [8, -1])
        let drum = SimulatedDrum(steps: 40, magnet: 0, positions: [8, 25])
        let driver = restarted(on: journal, drum: drum)
        defer { driver.stop() }
        #expect(driver.homeUncertain() == 1)
        #expect(await eventually { driver.idle })
        // Module 1: 15 steps to its magnet, 4 to flap 0, 8 to flap 2. Module 0 never moved.
        #expect(drum.positions == [8, 52] && drum.log.allSatisfy { $0 == 1 }, "\(drum.positions)")
    }

    /// Issue 34: a kill between a step's write and its store leaves the module *in flight* in
    /// the journal — at its place or one step short of it. With a home sensor the restart homes
    /// it, and it lands exactly; the modules the journal knows stay.
    @Test func aModuleCaughtBetweenItsStepAndItsStoreIsHomed() async throws {
        let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).bin"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let before = try #require(StepJournal(path: path, modules: 2, stepsPerRevolution: 40))
            before.set(0, 9, inFlight: true)  // its step to 9 was about to be written, or just was
            before.set(1, 8)
        }
        let journal = try #require(StepJournal(path: path, modules: 2, stepsPerRevolution: 40))
        #expect(journal.restored.map { $0.map { $0 ?? -1 } } == [9, 8])
        #expect(journal.restoredInFlight == [0])
        // The kill came before the write: module 0 stands on 8, not 9.
        let drum = SimulatedDrum(steps: 40, magnet: 0, positions: [8, 8])
        let driver = restarted(on: journal, drum: drum)
        defer { driver.stop() }
        #expect(driver.homeUncertain() == 1)
        #expect(await eventually { driver.idle })
        // Module 0: to its magnet (40), 4 steps to flap 0, 8 to flap 2. Module 1 never moved.
        #expect(drum.positions == [52, 8] && drum.log.allSatisfy { $0 == 0 }, "\(drum.positions) \(drum.log)")
    }

    /// Issue 34, item 2: homing asked of the conductor is played by the driver and lands on the
    /// timeline — one `homed` event per module with the flap it stands on and the flaps its turn
    /// passed, then the board settles where the motors are.
    @Test func homingThroughTheConductorLandsOnItsTimeline() async throws {
        final class Events: FlipObserver {
            let all = Mutex<[FlipEvent]>([])
            let settled = Mutex<[Frame]>([])
            func flip(_ event: FlipEvent) { all.withLock { $0.append(event) } }
            func settled(board: Int, transition: Int, frame: Frame) { settled.withLock { $0.append(frame) } }
        }
        let two = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], pulseNanos: 1_000_000)))
        let drum = SimulatedDrum(steps: 40, magnet: 0, positions: [17, 30])
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: two, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [5, 5]))
        let events = Events()
        let conductor = Conductor(boards: [.init(rows: 1, cols: 2, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 0),
                                                 motion: .forward)], drivers: [events], planSinks: [driver])
        _ = conductor.start()
        driver.start(targets: [3, 3])
        defer { driver.stop(); conductor.stop() }
        #expect(conductor.home(board: 0) == 2)
        #expect(await eventually { events.settled.withLock { !$0.isEmpty } })
        let landed = events.all.withLock { $0 }
        // Module 0: 23 steps to its magnet, 5 to flap 0, 12 to flap 3 (40 steps: 10 flaps);
        // module 1: 10, 5 and 12 (27 steps: 6 flaps).
        #expect(landed.count == 2 && landed.allSatisfy(\.homed))
        #expect(landed.sorted { $0.col < $1.col }.map(\.flaps) == [10, 6], "\(landed.map(\.flaps))")
        #expect(landed.allSatisfy { Drum.standard.index(of: $0.glyph) == 3 })
        #expect(drum.positions == [57, 57] && !conductor.isMoving(board: 0))
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "CC")
    }

    /// Issue 34, item 2: a stop (SIGTERM) during a homing turn takes it off the timeline, and the
    /// driver's drain finishes it: the step journal then holds the module's place exactly, on
    /// the flap it was homing to, none in flight.
    @Test func aStopDuringHomingLeavesTheJournalExact() async throws {
        let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).bin"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let drum = SimulatedDrum(steps: 40, magnet: 0, position: 17)
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [5]))
        driver.attach(journal: try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 40)))
        let conductor = Conductor(boards: [.init(rows: 1, cols: 1, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 0),
                                                 motion: .forward)], drivers: [], planSinks: [driver])
        _ = conductor.start()
        driver.start(targets: [3])
        #expect(conductor.home(board: 0) == 1)
        #expect(await eventually { driver.stats.steps >= 5 })
        // The daemon's stop: flips in progress finish, the rest is dropped; then the outputs stop.
        conductor.finishFlipsInProgress()
        #expect(!conductor.isMoving(board: 0), "a stop waits for no homing turn")
        await offPool { driver.stop() }
        conductor.stop()
        // 23 steps to the magnet, 5 to flap 0, 12 to flap 3: on flap 3's edge, as the journal says.
        #expect(drum.position == 57)
        let reopened = try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 40))
        #expect(reopened.restored == [geometry.boundary(3)] && reopened.restoredInFlight.isEmpty, "\(String(describing: reopened.restored))")
    }

    /// Two step/dir modules with home sensors on `drum` (offsets of 4 steps), restarted on
    /// `journal` with flap 2 to show.
    func restarted(on journal: StepJournal, drum: SimulatedDrum) -> GPIODriver {
        let two = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], pulseNanos: 1_000_000)))
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: two, geometry: geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [4, 4]))
        driver.attach(journal: journal)
        driver.start(targets: [2, 2], positions: [2, 2])
        return driver
    }
}
