import FlapCore
import FlapInput
import FlapMessages
import Foundation

/// A local API post: the message, how the board is to move to it, and when it is to land.
public struct LocalPost: Equatable, Sendable {
    public var message: LocalMessage
    /// Vestaboard's `strategy`, `step_size`, `step_interval_ms`, or the app's `transition` and
    /// `speed`, and `arrival`, `max_moving` (all optional; checked).
    public var transition: TransitionFields
    /// `arriveAt`: the instant (ISO 8601, or seconds since 1970) at which every module lands.
    public var arriveAt: Double?
    /// `duration`: seconds (10 s – 12 h) the message shows before what was there comes back.
    public var duration: Double?
    /// `forced`: shown even in quiet hours (as Vestaboard's API says it).
    public var forced = false

    /// The fields beside the message and its transition, read in one pass; each wrong one is
    /// named by `problem`.
    private struct Extras: Decodable {
        var arriveAt: Double?
        var duration: Double?
        var forced: Bool?
        var problem: String?

        enum CodingKeys: String, CodingKey { case arriveAt, duration, forced }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let seconds = try? c.decodeIfPresent(Double.self, forKey: .arriveAt) {
                arriveAt = seconds
            } else if let text = try? c.decodeIfPresent(String.self, forKey: .arriveAt) {
                if let date = ISO8601DateFormatter().date(from: text) {
                    if LocalPost.offsetIsReal(text) { arriveAt = date.timeIntervalSince1970 } else {
                        problem = "arriveAt: '\(text.prefix(40))' has no real UTC offset (Z, or −12:00 … +14:00)"
                    }
                } else {
                    problem = "arriveAt: '\(text.prefix(40))' is not an ISO 8601 instant such as 2026-11-26T18:00:00Z"
                }
            } else if c.contains(.arriveAt), !((try? c.decodeNil(forKey: .arriveAt)) ?? false) {
                problem = "arriveAt is not an instant (ISO 8601 text, or seconds since 1970)"
            }
            if let a = arriveAt, !(0...4_102_444_800).contains(a) { problem = problem ?? "arriveAt: \(a) is not an instant between 1970 and 2100" }
            do { duration = try c.decodeIfPresent(Double.self, forKey: .duration) } catch { problem = problem ?? "duration is not a number of seconds" }
            if let d = duration, !InboxMessage.durationRange.contains(d) { problem = problem ?? "duration: \(d) s is outside 10 s – 12 h (10…43200)" }
            do { forced = try c.decodeIfPresent(Bool.self, forKey: .forced) } catch { problem = problem ?? "forced is not true or false" }
        }
    }

    /// Whether an ISO 8601 instant ends in `Z` or an offset that a clock somewhere can show:
    /// −12:00 … +14:00, minutes under 60 (the formatter alone takes `+99:00`).
    static func offsetIsReal(_ text: String) -> Bool {
        let t = Array(text.utf8)
        guard let last = t.last else { return false }
        if last == UInt8(ascii: "Z") || last == UInt8(ascii: "z") { return true }
        guard let sign = t.lastIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) else { return false }
        let digits = t[(sign + 1)...].filter { $0 != UInt8(ascii: ":") }
        guard digits.count == 4, digits.allSatisfy({ (48...57).contains($0) }) else { return false }
        let n = digits.map { Int($0) - 48 }
        let hours = n[0] * 10 + n[1], minutes = n[2] * 10 + n[3]
        return minutes < 60 && (t[sign] == UInt8(ascii: "+") ? hours * 60 + minutes <= 14 * 60 : hours * 60 + minutes <= 12 * 60)
    }

    /// Reads a body as `LocalMessage.parse` does, then the fields of its transition and the rest.
    public static func parse(_ body: Data) -> Result<LocalPost, LocalAPIError> {
        let message: LocalMessage
        switch LocalMessage.parse(body) {
        case .failure(let e): return .failure(e)
        case .success(let m): message = m
        }
        let first = StrictJSON.firstByte(of: body)
        guard first == UInt8(ascii: "{") else { return .success(LocalPost(message: message, transition: TransitionFields())) }
        let fields: TransitionFields
        do { fields = try JSONDecoder().decode(TransitionFields.self, from: body) } catch let DecodingError.typeMismatch(type, c) {
            let key = c.codingPath.first?.stringValue ?? "?"
            return .failure(.badRequest("\(key) is not \(type == Int.self ? "a whole number" : "text")"))
        } catch {
            return .failure(.badRequest("the transition fields are not readable"))
        }
        do throws(TransitionFields.Invalid) { _ = try fields.style() } catch {
            return .failure(.badRequest(error.description))
        }
        guard let extras = try? JSONDecoder().decode(Extras.self, from: body) else { return .failure(.badRequest("body is not a message")) }
        if let problem = extras.problem { return .failure(.badRequest(problem)) }
        return .success(LocalPost(message: message, transition: fields, arriveAt: extras.arriveAt, duration: extras.duration,
                                  forced: extras.forced ?? false))
    }
}

/// A message posted to the local API: rows of codes (a bare array, or `{"characters": …}` as
/// the Vestaboard Local API takes it), `{"text": …}` to be laid out, or a VBML document
/// (`{"components": […], "props": …, "style": …}`) to be rendered on the board's size.
public enum LocalMessage: Equatable, Sendable {
    case codes([[Int]])
    case text(String)
    case vbml(VBMLDocument)

    private struct Object: Decodable {
        var characters: [[Int]]?
        var text: String?
    }

    /// What a body may hold: the local API's body limit, and nesting no message needs.
    public static let limits = JSONLimits(maxBytes: LocalAPI.maxBody, maxDepth: 8)

    /// Reads a request body; the error says what is wrong and where. The bytes are checked as
    /// strict JSON within `limits` before a decoder sees them.
    public static func parse(_ body: Data) -> Result<LocalMessage, LocalAPIError> {
        do throws(JSONInputError) { try StrictJSON.check(Array(body), limits: limits) } catch {
            return .failure(.badRequest("body is not JSON: \(error)"))
        }
        let first = StrictJSON.firstByte(of: body)
        if first == UInt8(ascii: "{"), let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
           object["components"] != nil {
            guard object["characters"] == nil, object["text"] == nil else {
                return .failure(.badRequest("give one of characters, text and components (VBML), not several"))
            }
            do throws(VBMLDocument.Problem) { return .success(.vbml(try VBMLDocument.decode(body))) } catch {
                return .failure(.badRequest("VBML: \(error.description)"))
            }
        }
        do {
            if first == UInt8(ascii: "[") { return .success(.codes(try JSONDecoder().decode([[Int]].self, from: body))) }
            let object = try JSONDecoder().decode(Object.self, from: body)
            if let rows = object.characters { return .success(.codes(rows)) }
            if let text = object.text { return .success(.text(text)) }
            return .failure(.badRequest("expected an array of rows of codes, {\"characters\": […]}, {\"text\": \"…\"} or VBML {\"components\": […]}"))
        } catch let error as DecodingError {
            let root = first == UInt8(ascii: "[") ? "message" : ""
            if case .dataCorrupted(let c) = error, c.codingPath.isEmpty,
               let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
                // Valid JSON that the decoder refused as a whole: find the value that is no code.
                let rows: Any? = root.isEmpty ? (json as? [String: Any])?["characters"] : json
                if let place = firstNonInteger(rows, path: root.isEmpty ? "characters" : root) {
                    return .failure(.badRequest("\(place) is not a whole-number code"))
                }
            }
            return .failure(.badRequest(describe(error, root: root)))
        } catch {
            return .failure(.badRequest("body is not JSON"))
        }
    }

    private static func firstNonInteger(_ value: Any?, path: String) -> String? {
        guard let rows = value as? [Any] else { return nil }
        for (r, row) in rows.enumerated() {
            guard let row = row as? [Any] else { return "\(path)[\(r)]" }
            for (c, v) in row.enumerated() {
                guard let n = v as? NSNumber, n.doubleValue.rounded() == n.doubleValue else { return "\(path)[\(r)][\(c)]" }
            }
        }
        return nil
    }

    private static func describe(_ error: DecodingError, root: String) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.reduce(root) { s, k in k.intValue.map { "\(s)[\($0)]" } ?? (s.isEmpty ? k.stringValue : "\(s).\(k.stringValue)") }
        }
        switch error {
        case .typeMismatch(let type, let c):
            let what = type == Int.self ? "a whole-number code" : type == String.self ? "a string" : "an array"
            return c.codingPath.isEmpty ? "expected an array of rows of codes, {\"characters\": […]} or {\"text\": \"…\"}"
                : "\(place(c.codingPath)) is not \(what)"
        case .dataCorrupted(let c):
            return c.codingPath.isEmpty ? "body is not JSON" : "\(place(c.codingPath)) is not a whole-number code"
        case .valueNotFound(_, let c): return "\(place(c.codingPath)) is null"
        case .keyNotFound(let k, _): return "missing \(k.stringValue)"
        @unknown default: return "body is not a message"
        }
    }
}

/// A refusal of the local API: an HTTP status and a message that names the problem.
public struct LocalAPIError: Error, Equatable, Sendable {
    public var status: Int
    public var message: String
    public static func badRequest(_ m: String) -> LocalAPIError { LocalAPIError(status: 400, message: m) }
}
