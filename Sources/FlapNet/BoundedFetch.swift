import AsyncHTTPClient
import FlapInput
import Foundation
import NIOCore

/// Fetches a document for a schedule's source: over HTTP(S) or from a file, within a time limit
/// (the whole answer, head and body: a server that trickles is given up too) and a size limit
/// (at most one byte past it is read). What went wrong is a sentence naming the source's place.
public enum BoundedFetch {
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }

    public static func fetch(_ location: String, isURL: Bool, timeout: Double, maxBytes: Int) async throws(Problem) -> [UInt8] {
        do {
            return try await withThrowingTaskGroup(of: [UInt8].self) { group in
                group.addTask { isURL ? try await get(location, maxBytes: maxBytes) : try read(location, maxBytes: maxBytes) }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    throw Problem("no answer within \(Int(timeout)) s")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let p as Problem {
            throw p
        } catch is CancellationError {
            throw Problem("cancelled")
        } catch {
            throw Problem("\(error)")
        }
    }

    private static func get(_ url: String, maxBytes: Int) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: "flapd")
        let response = try await HTTPClient.shared.execute(request, deadline: .distantFuture)
        guard response.status == .ok else { throw Problem("answered \(response.status.code) \(response.status.reasonPhrase)") }
        var bytes: [UInt8] = []
        for try await part in response.body {
            guard bytes.count + part.readableBytes <= maxBytes else { throw Problem("answered more than \(maxBytes / 1024) KiB") }
            bytes += part.readableBytesView
        }
        return bytes
    }

    private static func read(_ path: String, maxBytes: Int) throws(Problem) -> [UInt8] {
        do { return try BoundedFile.read(path, maxBytes: maxBytes) } catch {
            if case .tooLarge = error { throw Problem("the file \(path) is larger than \(maxBytes / 1024) KiB") }
            throw Problem("cannot read the file \(error)")
        }
    }
}
