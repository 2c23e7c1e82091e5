import FlapSound
import Foundation

/// Quiet hours for motion: from one time of day to another (local time; the span may cross
/// midnight), messages are held until the hours end (`hold`) or shown with the gentle style
/// (`gentle`). A message marked `forced` goes through either way.
public struct QuietHours: Sendable, Equatable {
    public enum Messages: String, Sendable, CaseIterable { case hold, gentle }
    /// Minutes since midnight.
    public var from: Int
    public var to: Int
    public var messages: Messages
    public init(from: Int, to: Int, messages: Messages) { self.from = from; self.to = to; self.messages = messages }

    /// The minute of the day at `t` (seconds since 1970), in the machine's time zone.
    static func minute(_ t: Double) -> (minute: Int, second: Double) {
        let c = Calendar.current.dateComponents([.hour, .minute, .second, .nanosecond], from: Date(timeIntervalSince1970: t))
        return ((c.hour ?? 0) * 60 + (c.minute ?? 0), Double(c.second ?? 0) + Double(c.nanosecond ?? 0) / 1e9)
    }

    /// Whether the hours hold at `t`.
    public func holds(at t: Double) -> Bool {
        ClackPlayer.isQuiet(minute: Self.minute(t).minute, from: from, to: to)
    }

    /// The instant the hours end next, after `t`.
    public func end(after t: Double) -> Double {
        let (m, s) = Self.minute(t)
        var minutes = (to - m + 1440) % 1440
        if minutes == 0 { minutes = 1440 }
        return t - s + Double(minutes * 60)
    }
}
