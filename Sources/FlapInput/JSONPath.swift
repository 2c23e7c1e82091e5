import Foundation

/// A path into a JSON document, as a schedule's text names a value of a source:
/// `current.temperature_2m`, `daily.time[0]`, `departures[2].line`, `["key with.dots"].x`.
/// Keys are letters, digits, `_` and `-` (others in `["…"]`, with `\"` and `\\`); indices are
/// whole numbers from 0 (negative ones count from the end: `[-1]` is the last).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }
    public let steps: [Step]
    public let description: String

    public static let maxCharacters = 256
    public static let maxSteps = 32

    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Reads a path; throws a sentence naming where it goes wrong.
    public init(_ text: String) throws(Problem) {
        description = text
        guard text.count <= Self.maxCharacters else { throw Problem(description: "the path is longer than \(Self.maxCharacters) characters") }
        let chars = Array(text.unicodeScalars)
        var steps: [Step] = []
        var i = 0
        func fail(_ what: String) -> Problem { Problem(description: "\(what) at character \(i + 1) of the path '\(text.prefix(60))'") }
        func isKeyChar(_ c: Unicode.Scalar) -> Bool {
            (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-") && c != "." && c != "["
        }
        while i < chars.count {
            if chars[i] == "[" {
                i += 1
                guard i < chars.count else { throw fail("'[' without its ']'") }
                if chars[i] == "\"" {
                    i += 1
                    var key = String.UnicodeScalarView()
                    while i < chars.count, chars[i] != "\"" {
                        if chars[i] == "\\" {
                            i += 1
                            guard i < chars.count, chars[i] == "\"" || chars[i] == "\\" else { throw fail("only \\\" and \\\\ may be escaped") }
                        }
                        key.append(chars[i]); i += 1
                    }
                    guard i < chars.count else { throw fail("a quoted key without its closing quote") }
                    i += 1
                    steps.append(.key(String(key)))
                } else {
                    var digits = ""
                    if chars[i] == "-" { digits.append("-"); i += 1 }
                    while i < chars.count, ("0"..."9").contains(chars[i]), digits.count < 8 { digits.unicodeScalars.append(chars[i]); i += 1 }
                    guard let n = Int(digits) else { throw fail("expected an index (0, 1, … or -1) or a quoted key") }
                    steps.append(.index(n))
                }
                guard i < chars.count, chars[i] == "]" else { throw fail("expected ']'") }
                i += 1
            } else {
                if chars[i] == "." {
                    guard !steps.isEmpty else { throw fail("a path cannot begin with '.'") }
                    i += 1
                }
                var key = String.UnicodeScalarView()
                while i < chars.count, isKeyChar(chars[i]) { key.append(chars[i]); i += 1 }
                guard !key.isEmpty else { throw fail("expected a key") }
                steps.append(.key(String(key)))
            }
            guard steps.count <= Self.maxSteps else { throw Problem(description: "more than \(Self.maxSteps) steps in the path '\(text.prefix(60))'") }
        }
        guard !steps.isEmpty else { throw Problem(description: "an empty path") }
        self.steps = steps
    }

    /// The value at the path in a document of `JSONSerialization`, nil when a step finds nothing.
    public func value(in document: Any) -> Any? {
        var here: Any = document
        for step in steps {
            switch step {
            case .key(let k):
                guard let object = here as? [String: Any], let next = object[k] else { return nil }
                here = next
            case .index(let n):
                guard let array = here as? [Any] else { return nil }
                let at = n < 0 ? array.count + n : n
                guard array.indices.contains(at) else { return nil }
                here = array[at]
            }
        }
        return here
    }

    /// A value as a board shows it: text as it is, a number as written (`decimals`: rounded to
    /// that many places), true / false, nothing for null; nil for an object or an array.
    public static func text(_ value: Any, decimals: Int? = nil) -> String? {
        switch value {
        case let s as String: return s
        case is NSNull: return ""
        case let n as NSNumber:
            // JSON's true and false are the numbers of type "c" (JSONSerialization makes no other).
            if String(cString: n.objCType) == "c" { return n.boolValue ? "true" : "false" }
            let d = n.doubleValue
            if let decimals { return String(format: "%.\(max(0, min(decimals, 6)))f", d) }
            if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return "\(d)"
        default: return nil
        }
    }
}
