import FlapConfig
import FlapCore
import FlapGPIO
import FlapTiming

/// What a maker does to one module in a calibration session (`CalibrationSession`).
public enum CalibrationAction: Sendable, Equatable {
    /// Turn on by this many motor steps; a negative count turns back as a forward-only drum
    /// can: on round, a turn less that many.
    case steps(Int)
    /// Turn on to the next flap's edge.
    case flap
    /// The module shows this flap now.
    case showing(Glyph)
}

/// One request of a calibration session as JSON (`POST /calibration`; what `flapd calibrate`
/// sends): `action` start, end, step, flap or mark; the module by `board` (optional on a wall of
/// one stepper board), `row` and `col` from 0; `steps` for a step; `showing` for a mark.
public struct CalibrationRequest: Codable, Sendable {
    public var action: String
    public var board: String?
    public var row: Int?
    public var col: Int?
    public var steps: Int?
    public var showing: Showing?

    /// A flap named by its character (`"A"`, `" "` for the blank) or its Vestaboard code.
    public enum Showing: Codable, Sendable, Equatable {
        case character(String), code(Int)
        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) { self = .code(n) } else { self = .character(try c.decode(String.self)) }
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .character(let s): try c.encode(s)
            case .code(let n): try c.encode(n)
            }
        }
    }

    public init(action: String, board: String? = nil, row: Int? = nil, col: Int? = nil, steps: Int? = nil, showing: Showing? = nil) {
        self.action = action; self.board = board; self.row = row; self.col = col; self.steps = steps; self.showing = showing
    }
}

/// A calibration request refused: why, and the HTTP status the local API answers with.
public struct CalibrationProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public let status: Int
    init(_ description: String, status: Int = 409) { self.description = description; self.status = status }
}

/// A module after a calibration request: where the driver has it (steps from flap 0's edge, and
/// the flap that is), and — homed, with a home sensor — its steps from the magnet and its offset.
public struct CalibratedModule: Codable, Sendable, Equatable {
    public var board: String
    public var row: Int
    public var col: Int
    public var place: Int?
    public var flap: Int?
    public var stepsFromMagnet: Int?
    public var offset: Int?
    /// The offset this request saved in `calibration.json`, if it saved one.
    public var saved: Int?

    enum CodingKeys: String, CodingKey {
        case board, row, col, place, flap, offset, saved
        case stepsFromMagnet = "steps_from_magnet"
    }
}

extension GPIOBoards {
    /// Turns or marks one module of a stepper board, the turn on the conductor's timeline; a mark
    /// that yields an offset saves it (atomically, in `<state dir>/calibration.json`) before it
    /// answers. Blocking work (the file): call off the event loops.
    package func calibrate(board: Int, _ b: BoardConfig, row: Int, col: Int, _ action: CalibrationAction,
                           conductor: Conductor) throws(CalibrationProblem) -> CalibratedModule {
        let id = b.id
        guard let d = drivers.first(where: { $0.board == board }) else {
            throw CalibrationProblem("board '\(id)' has no stepper modules on GPIO to calibrate", status: 400)
        }
        guard (0..<b.rows).contains(row), (0..<b.cols).contains(col) else {
            throw CalibrationProblem("board '\(id)' has no module \(row),\(col) (rows 0–\(b.rows - 1), columns 0–\(b.cols - 1))", status: 400)
        }
        let cols = b.cols
        let m = row * cols + col, geometry = d.config.geometry
        let turn: (any HomingReport) throws(GPIODriver.CalibrationRefusal) -> Int?
        switch action {
        case .steps(let n):
            let spr = geometry.stepsPerRevolution
            guard n != 0, (-(spr - 1)...spr).contains(n) else {
                throw CalibrationProblem("steps: \(n) is not 1–\(spr) (a turn), or back -1 to -\(spr - 1)", status: 400)
            }
            let forward = n > 0 ? n : spr + n
            turn = { report throws(GPIODriver.CalibrationRefusal) in try d.driver.nudge(board: board, module: m, steps: forward, report: report); return nil }
        case .flap:
            let place = d.driver.calibrationPlace(of: m)?.place ?? 0
            let (flap, left) = geometry.flap(finishing: place)
            let n = left > 0 ? left : geometry.steps(fromFlap: flap)
            turn = { report throws(GPIODriver.CalibrationRefusal) in try d.driver.nudge(board: board, module: m, steps: n, report: report); return nil }
        case .showing(let glyph):
            guard let flap = b.drum.index(of: glyph), flap < geometry.flaps else {
                throw CalibrationProblem("showing: '\(glyph.text)' is not a flap of board '\(id)'s drum", status: 400)
            }
            turn = { report throws(GPIODriver.CalibrationRefusal) in try d.driver.mark(board: board, module: m, showing: flap, report: report) }
        }
        var saved: Int?
        do throws(GPIODriver.CalibrationRefusal) {
            try conductor.turn(board: board, module: m) { report throws(GPIODriver.CalibrationRefusal) in saved = try turn(report) }
        } catch {
            throw CalibrationProblem(error.description)
        }
        if let offset = saved {
            if let stateDir {
                do { try Calibration.set(offset, board: id, index: m, modules: d.driver.moduleCount, in: stateDir) } catch {
                    throw CalibrationProblem("the offset \(offset) could not be saved: \(error)", status: 500)
                }
                logger.notice("calibrated", metadata: ["board": "\(id)", "module": "\(row),\(col)", "offset": "\(offset)"])
            } else {
                logger.warning("calibrated without a state folder: the offset is not kept across a restart",
                               metadata: ["board": "\(id)", "module": "\(row),\(col)", "offset": "\(offset)"])
            }
        }
        let now = d.driver.calibrationPlace(of: m)
        return CalibratedModule(board: id, row: row, col: col, place: now?.place, flap: now?.place.map { geometry.flap(finishing: $0).flap },
                                stepsFromMagnet: now?.stepsFromMagnet, offset: now?.offset, saved: saved)
    }
}
