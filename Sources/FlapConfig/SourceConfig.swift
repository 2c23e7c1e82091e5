import Foundation

/// One entry of the config's `sources:`: where a schedule's live values come from — a JSON
/// document or an iCalendar feed, over HTTP(S) or from a file — fetched on its own interval,
/// within a time and a size limit.
public struct SourceConfig: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case json, ical }
    /// The name props read it by: `{{weather:current.temperature_2m}}`.
    public var id: String
    public var kind: Kind
    /// An http:// or https:// URL, or a file's path.
    public var location: String
    /// Fetched this often (seconds).
    public var every: Double = 900
    /// A fetch that takes longer is given up (seconds).
    public var timeout: Double = 10
    /// An answer larger than this is refused (bytes).
    public var maxBytes = 256 * 1024
    /// A value older than this is stale (seconds); 3 intervals unless set.
    public var stale: Double = 2700
    /// A calendar's events from the instant an entry speaks to this many hours after it.
    public var windowHours: Double = 24
    /// At most this many of a calendar's events.
    public var count = 3

    public init(id: String, kind: Kind, location: String) { self.id = id; self.kind = kind; self.location = location }

    /// Whether `location` is fetched over the network.
    public var isURL: Bool { location.hasPrefix("http://") || location.hasPrefix("https://") }

    /// The file of a `file://` location or a path.
    public var path: String { location.hasPrefix("file://") ? String(location.dropFirst(7)) : location }
}
