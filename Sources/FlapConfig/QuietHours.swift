import FlapCore
import Foundation

/// Quiet hours for motion: from one time of day to another (local time; the span may cross
/// midnight), messages are held until the hours end (`hold`) or shown with the gentle style
/// (`gentle`). A message marked `forced` goes through either way. The span's rule is
/// `DailySpan`'s, which the clack's quiet hours follow too.
public struct QuietHours: Sendable, Equatable {
    public enum Messages: String, Sendable, CaseIterable, Codable { case hold, gentle }
    /// Minutes since midnight.
    public var from: Int
    public var to: Int
    public var messages: Messages
    /// The zone its times are read in (the config's `time_zone`); nil: the machine's.
    public var timeZone: TimeZone?
    public init(from: Int, to: Int, messages: Messages, timeZone: TimeZone? = nil) {
        self.from = from; self.to = to; self.messages = messages; self.timeZone = timeZone
    }

    public var span: DailySpan { DailySpan(from: from, to: to, timeZone: timeZone) }

    /// Whether the hours hold at `t` (seconds since 1970).
    public func holds(at t: Double) -> Bool { span.holds(at: t) }

    /// The instant the hours end next, after `t`.
    public func end(after t: Double) -> Double { span.end(after: t) }
}
