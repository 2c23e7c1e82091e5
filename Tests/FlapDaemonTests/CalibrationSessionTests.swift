@testable import FlapBoard
import FlapClock
@testable import FlapConfig
import FlapCore
import FlapGPIO
@testable import FlapLocalAPI
import FlapNet
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing
import TestWaits

/// Issue 35, items 1 and 2, in process: live calibration through the local API's handler on a
/// board of two simulated drums — the session holds the wall, a step and a flap turn a module on,
/// a mark saves the offset the drum has (in `calibration.json`) and the module lands where the
/// board wants it; a message that comes meanwhile waits and shows once the session ends; an idle
/// session ends by itself; hostile bodies are refused naming what was wrong.
@Suite struct CalibrationSessionTests {
    static let yaml = """
        local_api: { key: k }
        boards:
          - id: wall
            rows: 1
            cols: 2
            output: gpio
            timing: { flip_ms: 50, column_stagger_ms: 0, row_stagger_ms: 0 }
            gpio: { chip: c, kind: step_dir, step: [1, 2], steps_per_revolution: 80, home: { lines: [4, 5] } }
        """

    struct Rig {
        let answer: @Sendable (LocalHTTPServer.Request) async -> LocalHTTPServer.Response
        let wall: Wall
        let mailroom: Mailroom
        let session: CalibrationSession
        let drum: SimulatedDrum
        let driver: GPIODriver
        let dir: String
        /// The turns a drum's homing took beyond one (in steps): a magnet's edge read late on a
        /// starved machine sends a drum whose flap 0 sits at its magnet on round once more
        /// (forward only; `GPIODriver.handle(.homed)`), at its magnet all the same.
        let homedLate: [Int]

        /// Each drum's steps so far as if its homing had taken one turn.
        var positions: [Int] { zip(drum.positions, homedLate).map { $0 - $1 } }

        func stop() {
            driver.stop()
            wall.conductor.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }

        func post(_ body: String) async -> (status: Int, json: [String: Any]) {
            await request(.POST, body.hasPrefix("{\"text") ? "/local-api/message" : "/calibration", body)
        }

        func request(_ method: HTTPMethod, _ path: String, _ body: String = "") async -> (status: Int, json: [String: Any]) {
            var headers = HTTPHeaders()
            headers.add(name: "X-Vestaboard-Local-Api-Key", value: "k")
            let r = await answer(LocalHTTPServer.Request(method: method, path: path, headers: headers, body: ByteBuffer(string: body)))
            return (r.status, (try? JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]) ?? [:])
        }
    }

    /// Two drums, 80 steps a turn on the 40-flap drum (2 a flap), homed with offsets 0: both at
    /// their magnets, showing the blank.
    func rig() async throws -> Rig {
        let config = try ConfigLoader.parse(Self.yaml)
        let g = try #require(config.boards[0].gpio)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let dir = NSTemporaryDirectory() + "flap-calibration-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let drum = SimulatedDrum(steps: 80, magnet: 0, positions: [10, 20])
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: g.wiring, geometry: g.geometry, flip: 50_000_000, outputs: drum)
        driver.attach(.init(inputs: drum, offsets: [0, 0]))
        let gpio = GPIOBoards(drivers: [(0, driver, g)], ids: ["wall"], stateDir: dir, logger: logger)
        let wall = Wall(config: config, drivers: [], planSinks: gpio.sinks, logger: logger)
        _ = wall.conductor.start()
        driver.start(targets: [0, 0])
        wall.conductor.home(board: 0)
        #expect(await eventually { driver.idle && !wall.conductor.isMoving(board: 0) })
        // At their magnets: after one turn, or — an edge read late — a turn more.
        #expect(drum.positions.allSatisfy { $0 >= 80 && $0 % 80 == 0 }, "\(drum.positions)")
        let homedLate = drum.positions.map { $0 - 80 }
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger) { _, _ in }
        let session = CalibrationSession(wall: wall, gpio: gpio, mailroom: mailroom, logger: logger)
        let status = DaemonStatus(wall: wall, sound: nil, gpio: gpio, mailroom: mailroom)
        let answer = LocalAPI.handler(wall: wall, mailroom: mailroom, key: "k", logger: logger, status: status, calibration: session)
        return Rig(answer: answer, wall: wall, mailroom: mailroom, session: session, drum: drum, driver: driver, dir: dir, homedLate: homedLate)
    }

    @Test func stepsFlapsAndAMarkCalibrateAModuleWhileMessagesWait() async throws {
        let rig = try await rig()
        defer { rig.stop() }
        let refused = await rig.post(#"{"action": "step", "row": 0, "col": 1}"#)
        #expect(refused.status == 409 && (refused.json["error"] as? String)?.contains("calibration is not on") == true, "\(refused)")
        let started = await rig.post(#"{"action": "start"}"#)
        #expect(started.status == 200 && (started.json["session"] as? [String: Any])?["active"] as? Bool == true, "\(started)")
        // A message now waits: kept, the board still.
        let held = await rig.post(#"{"text": "HI"}"#)
        #expect(held.status == 202 && held.json["held"] as? String == "calibration", "\(held)")
        #expect(rig.mailroom.waiting().map(\.reason) == [.calibration] && rig.wall.target(board: 0).codes == [[0, 0]])
        // Module 0,1 on by three steps, then the maker says it shows A (flap 1, 2 steps from flap 0's edge).
        let stepped = await rig.post(#"{"action": "step", "board": "wall", "row": 0, "col": 1, "steps": 3}"#)
        let module = stepped.json["module"] as? [String: Any]
        #expect(stepped.status == 200 && module?["place"] as? Int == 3 && module?["steps_from_magnet"] as? Int == 3, "\(stepped.json)")
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        let marked = await rig.post(#"{"action": "mark", "row": 0, "col": 1, "showing": "a"}"#)
        #expect(marked.status == 200 && (marked.json["module"] as? [String: Any])?["saved"] as? Int == 1, "\(marked)")
        let file = try String(contentsOfFile: rig.dir + "/calibration.json", encoding: .utf8)
        #expect(try Calibration.load(rig.dir) == ["wall": [0, 1]], "\(file)")
        // It lands on the blank it should show: on round, forward only (78 steps), at offset 1.
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        #expect(rig.positions[1] == 83 + 78)
        // Module 0,0 on by a flap: from flap 0's edge, two steps.
        let flapped = await rig.post(#"{"action": "flap", "row": 0, "col": 0}"#)
        #expect(flapped.status == 200 && (flapped.json["module"] as? [String: Any])?["flap"] as? Int == 1, "\(flapped)")
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        #expect(rig.positions[0] == 82)
        // A step back: a drum only turns forward, so on round, a turn less one step.
        let back = await rig.post(#"{"action": "step", "row": 0, "col": 0, "steps": -1}"#)
        #expect(back.status == 200 && (back.json["module"] as? [String: Any])?["place"] as? Int == 1, "\(back)")
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        #expect(rig.positions[0] == 82 + 79)
        // The end: the message shows.
        let ended = await rig.post(#"{"action": "end"}"#)
        #expect(ended.status == 200 && (ended.json["session"] as? [String: Any])?["active"] as? Bool == false)
        #expect(rig.wall.target(board: 0).codes == [[8, 9]] && rig.mailroom.waiting().isEmpty)
        // Each goes the short way to its letter from where it stands: 0,0 from a step past flap
        // 0's edge to H (16 steps on: 15), 0,1 from its blank (offset 1) to I (18).
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        #expect(rig.positions == [161 + 15, 161 + 18], "\(rig.positions)")
    }

    /// A message shown the instant after a mark, before the mark's landing has reached the
    /// conductor (the HIL run caught it: the module went round once too many): the module lands
    /// on the message, the short way.
    @Test func aMessageRightAfterAMarkLandsWhereTheBoardWantsIt() async throws {
        let rig = try await rig()
        defer { rig.stop() }
        _ = await rig.session.begin()
        #expect(await rig.post(#"{"action": "step", "row": 0, "col": 0, "steps": 9}"#).status == 200)
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        #expect(await rig.post(#"{"text": "C"}"#).status == 202)
        #expect(await rig.post(#"{"action": "mark", "row": 0, "col": 0, "showing": " "}"#).status == 200)
        _ = await rig.session.end()  // at once: C is planned while the mark's turn is still the conductor's
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        // Offset 9 now; C (code 3, its edge 6 steps on): the drum at 80 + 9 + 6, not a turn more.
        #expect(rig.positions[0] == 95 && rig.wall.conductor.frame(board: 0).glyphs.first?.text == "C", "\(rig.positions)")
    }

    @Test func anIdleSessionEndsByItselfAndTheWallIsGivenBack() async throws {
        let rig = try await rig()
        defer { rig.stop() }
        _ = await rig.session.begin()
        _ = await rig.post(#"{"text": "OK"}"#)
        #expect(rig.mailroom.isCalibrating && rig.wall.target(board: 0).codes == [[0, 0]])
        #expect(await rig.session.endIfIdle() == false, "not idle yet")
        #expect(await rig.session.endIfIdle(now: MonotonicClock.now() + Int64(CalibrationSession.defaultIdleSeconds + 1) * 1_000_000_000))
        #expect(!rig.mailroom.isCalibrating && !rig.session.status.active && rig.wall.target(board: 0).codes == [[15, 11]])
    }

    @Test func hostileOrWrongRequestsAreRefusedNamingWhatWasWrong() async throws {
        let rig = try await rig()
        defer { rig.stop() }
        _ = await rig.session.begin()
        for (body, status, says) in [
            ("{", 400, "not JSON"),
            (String(repeating: " ", count: 600) + "{}", 400, "larger than 512 bytes"),
            (#"{"action": "dance"}"#, 400, "action: 'dance'"),
            (#"{"action": "step"}"#, 400, "row and col"),
            (#"{"action": "step", "row": 0, "col": 2}"#, 400, "no module 0,2"),
            (#"{"action": "step", "board": "door", "row": 0, "col": 0}"#, 400, "no board 'door'"),
            (#"{"action": "step", "row": 0, "col": 0, "steps": 0}"#, 400, "steps: 0"),
            (#"{"action": "step", "row": 0, "col": 0, "steps": -80}"#, 400, "steps: -80"),
            (#"{"action": "step", "row": "x", "col": 0}"#, 400, "row"),
            (#"{"action": "mark", "row": 0, "col": 0}"#, 400, "showing: missing"),
            (#"{"action": "mark", "row": 0, "col": 0, "showing": "AB"}"#, 400, "one character"),
            (#"{"action": "mark", "row": 0, "col": 0, "showing": 63}"#, 400, "not a flap"),
        ] {
            let r = await rig.post(body)
            #expect(r.status == status && (says.isEmpty || (r.json["error"] as? String)?.contains(says) == true), "\(body.prefix(60)) → \(r)")
        }
        #expect(rig.positions == [80, 80], "nothing moved")
    }

    /// Issue 35, item 4: the self-test turns every module once round, on the timeline; a drum
    /// that slips a step in its turn is named `slipping` with its error, the other `ok`; both end
    /// on the flap they showed (the slipped step made good). (Without a stepper board there is
    /// nothing to turn: `WebRoutesTests`.)
    @Test func theSelfTestTurnsEveryModuleOnceAndNamesTheOneThatSlips() async throws {
        let rig = try await rig()
        defer { rig.stop() }
        // Away from their magnets first (H and I: 16 and 18 steps past), so each turn passes one.
        #expect(await rig.post(#"{"text": "HI"}"#).status == 201)
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        rig.drum.slip(1)  // the first step edge: module 0's
        let started = await rig.request(.POST, "/selftest")
        #expect(started.status == 202 && started.json["turning"] as? Int == 2, "\(started)")
        #expect(await eventually { !rig.driver.selfTesting })
        #expect(await eventually { rig.driver.idle && !rig.wall.conductor.isMoving(board: 0) })
        let report = await rig.request(.GET, "/selftest").json
        let modules = try #require(report["modules"] as? [[String: Any]], "\(report)")
        #expect(modules.count == 2 && modules[0]["verdict"] as? String == "slipping" && modules[0]["magnet_error"] as? Int == 1, "\(modules)")
        // The other is `ok` however late its turn ended (a busy machine's, not the module's):
        // that lateness is the report's, the most any turn ended past its plan.
        #expect(modules[1]["verdict"] as? String == "ok" && modules[1]["magnet_error"] as? Int == 0, "\(modules)")
        #expect(modules.allSatisfy { ($0["planned_seconds"] as? Double ?? 0) > 0 })
        let late = modules.map { ($0["seconds"] as? Double ?? 0) - ($0["planned_seconds"] as? Double ?? 0) }.max() ?? 0
        #expect(abs((report["late_seconds"] as? Double ?? -1) - max(0, late)) < 0.0015, "\(report)")
        #expect(rig.positions == [176, 178] && rig.wall.conductor.frame(board: 0).glyphs.map(\.text).joined() == "HI", "\(rig.positions)")
    }
}
