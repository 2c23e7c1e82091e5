/// One flip as the conductor fired it.
public struct FlipEvent: Sendable {
    /// Index of the board in the conductor.
    public var board: Int
    public var row: Int
    public var col: Int
    /// Which flip of the module's move (0-based).
    public var flip: Int
    /// The glyph shown once this flip passes 90°.
    public var glyph: Glyph
    /// Serial number of the board's transition this flip belongs to.
    public var transition: Int
    /// Monotonic nanoseconds: when the transition started, when this flip's 90° instant was
    /// planned, and when the conductor fired it.
    public var transitionStart: Int64
    public var planned: Int64
    public var actual: Int64
    /// The end of a homing turn (`Conductor.home`): the module has found its magnet and stands
    /// on `glyph`; its turn passed `flaps` flaps (0: it found none and is left still, faulty).
    /// Every other event is one flip: `homed` false, `flaps` 1.
    public var homed: Bool
    public var flaps: Int

    public init(board: Int, row: Int, col: Int, flip: Int, glyph: Glyph, transition: Int,
                transitionStart: Int64, planned: Int64, actual: Int64, homed: Bool = false, flaps: Int = 1) {
        self.board = board; self.row = row; self.col = col; self.flip = flip; self.glyph = glyph
        self.transition = transition; self.transitionStart = transitionStart
        self.planned = planned; self.actual = actual
        self.homed = homed; self.flaps = flaps
    }
}

/// What watches the conductor fire: the virtual board, the trace, the position journal, the
/// state keeper, the settle watcher, the systemd status line. (Outputs that move modules
/// themselves take the plan ahead of time: `MovePlanSink`, `ClackSink`.)
///
/// Both calls come from the conductor's real-time thread: they must return quickly and never
/// block on I/O (hand the work to a thread of the driver's own).
public protocol FlipObserver: AnyObject, Sendable {
    /// A flip reached its 90° point.
    func flip(_ event: FlipEvent)
    /// Every module of a board has finished its flips; `frame` is what it now shows.
    func settled(board: Int, transition: Int, frame: Frame)
    /// Modules of a board began homing turns (`Conductor.home`), transition `transition`: the
    /// board is moving until each has landed (a `homed` flip event) and it settles. Called from
    /// the thread that asked to home, not the conductor's. Most observers need only the
    /// landings (the default ignores it).
    func homing(board: Int, transition: Int, modules: [Int])
}

extension FlipObserver {
    public func homing(board: Int, transition: Int, modules: [Int]) {}
}

/// An output that must know flips ahead of time — sound, whose samples are written tens of
/// milliseconds before they are heard.
///
/// Called from the thread that gave the conductor a new target, right after planning: `clacks`
/// are the monotonic instants (ns) of every 90° point still to come on the board, from `since`
/// on; they replace whatever the sink held for that board from `since` on.
public protocol ClackSink: AnyObject, Sendable {
    func schedule(board: Int, clacks: [Int64], since: Int64)
}

/// An output that must know each module's move ahead of time — a serial bus whose displays or
/// controllers move modules themselves, sent each module's target at its cascade instant.
///
/// Called from the thread that gave the conductor a new target, right after planning: the
/// plan's moves have their `start` counted from `transitionStart` (monotonic ns), its timing and
/// drum are the board's at that moment; they replace whatever the sink held for that board.
///
/// One rule for every output, the conductor's own: a flip that has started by an instant
/// finishes; one that has not is dropped. A new plan applies it at its `transitionStart` (its
/// moves start when each module's flip in progress ends), a stop at `finish`'s instant — so
/// every output stops at the flap the conductor, and so the saved state, says.
public protocol MovePlanSink: AnyObject, Sendable {
    func planned(board: Int, plan: FlipPlan, transitionStart: Int64)
    /// The board stops at `instant` (monotonic ns): each module finishes the flip it has
    /// started by then and goes no further.
    func finish(board: Int, at instant: Int64)
    /// Homes those of `modules` (row-major) that it can — each turns to its magnet, on by its
    /// offset to flap 0 and on to the flap it should show (its newest plan's) — and returns
    /// them; `report` hears each one's end. A module homing takes no plan's steps until it has
    /// landed. Outputs without home sensors home nothing (the default).
    func home(board: Int, modules: [Int], report: any HomingReport) -> [Int]
}

extension MovePlanSink {
    public func home(board: Int, modules: [Int], report: any HomingReport) -> [Int] { [] }
}

/// Hears where homing turns end (`MovePlanSink.home`): the conductor, which puts each on the
/// board's timeline. Called from the output's thread, with none of its locks held.
public protocol HomingReport: AnyObject, Sendable {
    /// Module `module` of `board` ended its homing turn on drum index `flap` (nil: it found no
    /// magnet and is left still, faulty) after passing `flaps` flaps.
    func landed(board: Int, module: Int, flap: Int?, flaps: Int)
}
