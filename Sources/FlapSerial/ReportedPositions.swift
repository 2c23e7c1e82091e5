/// Where a bus's modules stand, as the display or controller says when asked at start
/// (`SplitflapDriver.reported`, `FlapbusDriver.reported`).
public enum ReportedPositions: Equatable, Sendable {
    /// Each module's flap (drum index), nil for a module that is not normal.
    case flaps([Int?])
    /// The device reports this many modules, fewer or more than the board has.
    case otherCount(Int)
    /// The device does not say which modules turn, so no flap it reports can be taken as where
    /// a module stands.
    case motionUnknown
}
