#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

/// Log lines for systemd's journal: `<N>` priority prefixes (sd-daemon(3)) on stderr, no
/// timestamp (the journal keeps its own), metadata as key=value.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private static let lock = Mutex(())

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The sd-daemon priority of a level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether stderr is the journal: `$JOURNAL_STREAM` names its device and inode.
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":").compactMap { UInt64($0) }
        var st = stat()
        guard parts.count == 2, fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == parts[0] && UInt64(st.st_ino) == parts[1]
    }

    public func log(event: LogEvent) {
        let all = self.metadata.merging(event.metadata ?? [:]) { _, new in new }
        let fields = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let error = event.error.map { " error=\($0)" } ?? ""
        let text = "\(event.message)\(fields)\(error)".replacingOccurrences(of: "\n", with: " ")
        let line = "<\(Self.priority(event.level))>\(text)\n"
        Self.lock.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }
}
