/// One module as a scripted peer reports it when asked where its modules stand (a splitflap
/// display's module state, a flapbus STATUS entry with its `moving` bit).
public struct StandingModule: Sendable {
    public var flap: UInt8, state: UInt8, moving: Bool
    public init(flap: UInt8, state: UInt8 = 0, moving: Bool = false) { self.flap = flap; self.state = state; self.moving = moving }
}
