import FlapConfig
import FlapInput
import FlapMessages
import FlapNet
import Foundation
import Logging
import Synchronization

/// The schedule's live values: each source of the config fetched on its own interval (after a
/// failure, sooner, by a backoff of at most the interval), its last good value kept — in memory
/// and, with a state folder, in `sources/ID` there, so a restart and `flapd preview` start from
/// it — and read by the props of the schedule's texts. A source that hangs, answers too much or
/// answers what does not read costs its time and size limit, keeps its last good value, and is
/// named with what went wrong in the log and in `/status`.
public final class ScheduleSources: Sendable {
    private struct Kept: Sendable {
        var value: Value?
        /// When the last good value came (seconds since 1970).
        var fetched: Double?
        var lastError: String?
        var nextFetch: Double?
    }

    /// A source's document as read.
    enum Value: @unchecked Sendable {
        /// A document of `JSONSerialization` (never changed once read).
        case json(Any)
        case calendar(ICalendar)
    }

    private let configs: [SourceConfig]
    private let kept: Mutex<[String: Kept]>
    private let folder: String?
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let changed: Mutex<(@Sendable (String) -> Void)?> = Mutex(nil)

    /// - Parameter folder: where the last good values are kept (`STATE/sources`); nil: nowhere.
    public init(configs: [SourceConfig], folder: String?, logger: Logger, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.configs = configs
        self.folder = folder
        self.logger = logger
        self.now = now
        var kept: [String: Kept] = [:]
        for c in configs {
            var k = Kept()
            if let folder, let (bytes, at) = Self.cached(folder + "/" + c.id, maxBytes: c.maxBytes) {
                if case .success(let v) = Self.read(bytes, as: c) { (k.value, k.fetched) = (v, at) }
            }
            kept[c.id] = k
        }
        self.kept = Mutex(kept)
    }

    /// Reads a value from a file instead of its cache (`flapd preview --source ID=FILE`).
    public func take(_ id: String, file: String) throws(BoundedFetch.Problem) {
        guard let c = configs.first(where: { $0.id == id }) else {
            throw BoundedFetch.Problem("no source '\(id.prefix(40))' in the config (sources: \(configs.map(\.id).joined(separator: ", ")))")
        }
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(file, maxBytes: c.maxBytes) } catch { throw BoundedFetch.Problem("\(error)") }
        switch Self.read(bytes, as: c) {
        case .success(let v): kept.withLock { $0[id] = Kept(value: v, fetched: now()) }
        case .failure(let p): throw p
        }
    }

    /// Called with a source's id whenever it gets a new value.
    public func onChange(_ body: @escaping @Sendable (String) -> Void) { changed.withLock { $0 = body } }

    /// Fetches every source on its interval until cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for c in configs { group.addTask { await self.keepFetching(c) } }
        }
    }

    private func keepFetching(_ c: SourceConfig) async {
        var backoff = Backoff()
        backoff.limit = min(c.every, 300)
        // A value kept from before is waited out, so a restart does not fetch at once.
        if let fetched = kept.withLock({ $0[c.id]?.fetched }), now() - fetched < c.every {
            let wait = c.every - (now() - fetched)
            kept.withLock { $0[c.id]?.nextFetch = now() + wait }
            guard (try? await Task.sleep(for: .seconds(wait))) != nil else { return }
        }
        while !Task.isCancelled {
            let delay: Double
            do throws(BoundedFetch.Problem) {
                let bytes = try await BoundedFetch.fetch(c.location, isURL: c.isURL, timeout: c.timeout, maxBytes: c.maxBytes)
                let value = try Self.read(bytes, as: c).get()
                let t = now()
                kept.withLock { $0[c.id] = Kept(value: value, fetched: t, lastError: nil, nextFetch: t + c.every) }
                if let folder { save(bytes, to: folder, id: c.id, at: t) }
                backoff.reset()
                delay = c.every
                logger.debug("source \(c.id) fetched", metadata: ["bytes": "\(bytes.count)"])
                changed.withLock { $0 }?(c.id)
            } catch {
                guard !Task.isCancelled else { return }
                delay = min(c.every, backoff.next())
                kept.withLock { $0[c.id]?.lastError = error.description; $0[c.id]?.nextFetch = now() + delay }
                logger.warning("source \(c.id): \(error); its last good value stays, next try in \(Int(delay)) s")
            }
            guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
        }
    }

    /// What a source's bytes say, or why they do not read.
    static func read(_ bytes: [UInt8], as c: SourceConfig) -> Result<Value, BoundedFetch.Problem> {
        switch c.kind {
        case .json:
            do throws(JSONInputError) {
                try StrictJSON.check(bytes, limits: JSONLimits(maxBytes: c.maxBytes, maxDepth: 64, maxValues: 1_000_000))
            } catch { return .failure(BoundedFetch.Problem("not JSON: \(error)")) }
            guard let document = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
                return .failure(BoundedFetch.Problem("not JSON"))
            }
            return .success(.json(document))
        case .ical:
            var limits = ICalendar.Limits()
            limits.maxBytes = c.maxBytes
            do throws(ICalendar.Problem) { return .success(.calendar(try ICalendar.parse(bytes, limits: limits))) } catch {
                return .failure(BoundedFetch.Problem("not an iCalendar feed: \(error)"))
            }
        }
    }

    /// Whether every source of `ids` has a value younger than its stale limit at `t`.
    public func areFresh(_ ids: Set<String>, at t: Double) -> Bool {
        kept.withLock { k in
            ids.allSatisfy { id in
                guard let c = configs.first(where: { $0.id == id }), let fetched = k[id]?.fetched, k[id]?.value != nil else { return false }
                return t - fetched <= c.stale
            }
        }
    }

    /// A prop's text at the instant an entry speaks (nil: the source has no value, or the path
    /// finds nothing there).
    public func text(_ prop: ScheduleText.SourceProp, at t: Double, calendar: Calendar) -> String? {
        guard let c = configs.first(where: { $0.id == prop.source }) else { return nil }
        let (value, fetched) = kept.withLock { ($0[c.id]?.value, $0[c.id]?.fetched) }
        if prop.age { return fetched.map { Self.age(t - $0) } }
        switch value {
        case nil: return nil
        case .json(let document)?:
            guard let path = prop.path else { return JSONPath.text(document, decimals: prop.decimals) }
            guard let p = try? JSONPath(path), let v = p.value(in: document) else { return nil }
            return JSONPath.text(v, decimals: prop.decimals)
        case .calendar(let cal)?:
            let events = Self.events(cal, from: t, c, calendar: calendar)
            guard let path = prop.path else { return events.map { $0["line"] as! String }.joined(separator: "\n") }
            guard let p = try? JSONPath(path), let v = p.value(in: ["events": events] as [String: Any]) else { return nil }
            return JSONPath.text(v, decimals: prop.decimals)
        }
    }

    /// A calendar's events from `t` over the source's window, as a document paths read: each
    /// with summary, location, start and end (seconds since 1970), all_day, time ("07:30" or
    /// "ALL DAY"), date ("Thu 24 Dec") and line ("07:30 DENTIST", or the summary of an all-day one).
    static func events(_ cal: ICalendar, from t: Double, _ c: SourceConfig, calendar: Calendar) -> [[String: Any]] {
        let found = cal.occurrences(from: t, to: t + c.windowHours * 3600, zone: calendar.timeZone, limit: c.count).occurrences
        let hours = DateFormatter.posix("HH:mm", in: calendar), day = DateFormatter.posix("EEE d MMM", in: calendar)
        return found.map { o in
            let time = o.allDay ? "ALL DAY" : hours.string(from: Date(timeIntervalSince1970: o.start))
            let date = day.string(from: Date(timeIntervalSince1970: o.start))
            let summary = o.summary.replacingOccurrences(of: "\n", with: " ")
            return ["summary": summary, "location": o.location ?? "", "start": o.start, "end": o.end, "all_day": o.allDay,
                    "time": time, "date": date, "line": o.allDay ? summary : "\(time) \(summary)"]
        }
    }

    /// An age as a board says it: "0 MIN", "12 MIN", "3 H", "2 D".
    static func age(_ seconds: Double) -> String {
        let s = max(0, seconds)
        if s < 3600 { return "\(Int(s / 60)) MIN" }
        if s < 86_400 { return "\(Int(s / 3600)) H" }
        return "\(Int(s / 86_400)) D"
    }

    /// Each source as `/status` lists it with an entry.
    public func status(_ ids: Set<String>, at t: Double) -> [StatusReport.SourceStatus] {
        kept.withLock { k in
            configs.filter { ids.contains($0.id) }.map { c in
                let s = k[c.id]
                return StatusReport.SourceStatus(id: c.id, fetched: s?.fetched, ageS: s?.fetched.map { ((t - $0) * 10).rounded() / 10 },
                                                 stale: !(s?.fetched.map { t - $0 <= c.stale } ?? false), lastError: s?.lastError,
                                                 nextFetch: s?.nextFetch)
            }
        }
    }

    /// A kept value: its bytes and when it came (the file's modification time); none when the
    /// file holds more than its source may (it is not read past that).
    static func cached(_ file: String, maxBytes: Int) -> ([UInt8], Double)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
              let modified = attributes[.modificationDate] as? Date, let bytes = try? BoundedFile.read(file, maxBytes: maxBytes) else { return nil }
        return (bytes, modified.timeIntervalSince1970)
    }

    private func save(_ bytes: [UInt8], to folder: String, id: String, at t: Double) {
        let file = folder + "/" + id
        do {
            try AtomicFile.replace(file, in: folder, with: Data(bytes))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: t)], ofItemAtPath: file)
        } catch {
            logger.warning("source \(id): cannot keep its value in \(folder): \(error)")
        }
    }
}
