import Foundation

/// A span of the local day, `[from, to)` in minutes since midnight, crossing midnight when `to`
/// is before `from`, empty when they are equal: the one rule of quiet hours, for the board's
/// motion (the mailroom) and for the clack.
public struct DailySpan: Sendable, Equatable {
    /// Minutes since midnight.
    public var from: Int
    public var to: Int
    /// The zone its times are read in (the config's `time_zone`); nil: the machine's.
    public var timeZone: TimeZone?
    public init(from: Int, to: Int, timeZone: TimeZone? = nil) { self.from = from; self.to = to; self.timeZone = timeZone }

    /// Whether a minute of the day lies in the span.
    public func contains(minute m: Int) -> Bool {
        guard from != to else { return false }
        return from < to ? (from..<to).contains(m) : m >= from || m < to
    }

    /// The minute of the day at `t` (seconds since 1970) in `zone` (nil: the machine's time
    /// zone), and the seconds into it.
    public static func minute(_ t: Double, in zone: TimeZone? = nil) -> (minute: Int, second: Double) {
        var calendar = Calendar.current
        if let zone { calendar.timeZone = zone }
        let c = calendar.dateComponents([.hour, .minute, .second, .nanosecond], from: Date(timeIntervalSince1970: t))
        return ((c.hour ?? 0) * 60 + (c.minute ?? 0), Double(c.second ?? 0) + Double(c.nanosecond ?? 0) / 1e9)
    }

    /// Whether the span holds at `t` (seconds since 1970).
    public func holds(at t: Double) -> Bool { contains(minute: Self.minute(t, in: timeZone).minute) }

    /// The instant the span ends next, after `t`.
    public func end(after t: Double) -> Double {
        let (m, s) = Self.minute(t, in: timeZone)
        var minutes = (to - m + 1440) % 1440
        if minutes == 0 { minutes = 1440 }
        return t - s + Double(minutes * 60)
    }
}
