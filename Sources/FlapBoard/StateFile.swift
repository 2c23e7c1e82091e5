import FlapInput
import Foundation

/// Reads the JSON files flapd keeps in its state folder (`boards.json`, `inbox.json`,
/// `saved-boards.json`). Each is checked as strict JSON before Foundation's decoder sees it:
/// `JSONDecoder` traps — the process dies with SIGILL, no error thrown — on a document nested
/// deeper than 512, and these files are read at every start, so one such file (a disk's damage, a
/// hand's edit, a restored backup) stopped flapd at every restart and froze the board. A file
/// refused here is an error that names it and what is wrong, and flapd starts without it.
package enum StateFile {
    /// Deep enough for any file flapd writes (6 levels at most), far below the decoder's trap;
    /// 64 MiB, eight times the most a catch-up of the message API answers (a file is never read
    /// past that: a sparse file of 100 GiB once asked for 100 GiB of memory at start).
    static let limits = JSONLimits(maxBytes: 64 << 20, maxDepth: 64, maxValues: .max, maxNumberBytes: 64)

    /// The file's contents as `type`; every failure a `StateError` that names the file.
    static func read<T: Decodable>(_ type: T.Type, from file: String) throws(StateError) -> T {
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(file, maxBytes: limits.maxBytes) } catch {
            throw StateError(path: file, reason: error.reason)
        }
        return try decode(type, from: Data(bytes), file: file)
    }

    /// What `read` makes of `data`, the contents of `file`.
    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String) throws(StateError) -> T {
        do { return try JSONDecoder().decode(type, from: data, checkedWithin: limits) } catch let error as JSONInputError {
            throw StateError(path: file, reason: "not JSON within the limits: \(error)")
        } catch {
            throw StateError(path: file, reason: "\(error)")
        }
    }
}
