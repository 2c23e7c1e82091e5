#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much JSON one input may hold. Every door that takes JSON checks its bytes against these
/// before a decoder sees them.
public struct JSONLimits: Sendable, Equatable {
    /// Largest input, in bytes.
    public var maxBytes: Int
    /// Deepest nesting of arrays and objects (the top-level value is depth 1).
    public var maxDepth: Int
    /// Most values in the whole input (every scalar, array and object counts one).
    public var maxValues: Int
    /// Longest number literal, in bytes.
    public var maxNumberBytes: Int

    public init(maxBytes: Int = 64 * 1024, maxDepth: Int = 16, maxValues: Int = 20_000, maxNumberBytes: Int = 40) {
        self.maxBytes = maxBytes; self.maxDepth = maxDepth; self.maxValues = maxValues; self.maxNumberBytes = maxNumberBytes
    }
}

/// Why an input is not strict JSON within its limits: what was wrong and at which byte
/// (with its line and column, both from 1).
public struct JSONInputError: Error, Equatable, Sendable, CustomStringConvertible {
    public let offset: Int
    public let line: Int
    public let column: Int
    public let reason: String
    public var description: String { "\(reason) at line \(line), column \(column) (byte \(offset))" }
}

/// A checker of JSON as RFC 8259 writes it, and nothing more lenient: UTF-8 only (no BOM), no
/// trailing commas, no comments, no duplicate keys in an object, no lone surrogates, strings
/// without raw control characters, numbers that a `Double` holds without overflowing to
/// infinity or underflowing to zero, exactly one value. It never recurses, so no input can
/// exhaust the stack, and it stops at the first problem.
public enum StrictJSON {
    /// JSON's white space (RFC 8259): space, tab, line feed, carriage return.
    public static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    /// The first byte of `bytes` past JSON's white space — which kind of value a document holds
    /// (`{`, `[`, `"` …) — or nil when there is nothing else.
    public static func firstByte<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> UInt8? { bytes.first { !isSpace($0) } }

    /// Checks `bytes`; throws the first problem found.
    public static func check(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONInputError) {
        var scanner = Scanner(bytes: bytes, limits: limits)
        try scanner.document()
    }

    /// Containers open at the current point, innermost last.
    enum Open { case array, object }

    struct Scanner {
        let b: [UInt8]
        let limits: JSONLimits
        var i = 0
        var values = 0
        var stack: [Open] = []
        /// The keys seen in each open object, innermost last.
        var keys: [Set<[UInt8]>] = []

        init(bytes: [UInt8], limits: JSONLimits) { b = bytes; self.limits = limits }

        func fail(_ reason: String, at offset: Int? = nil) -> JSONInputError {
            let at = min(offset ?? i, b.count)
            var line = 1, column = 1
            for byte in b[..<at] { if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 } }
            return JSONInputError(offset: at, line: line, column: column, reason: reason)
        }

        var atEnd: Bool { i >= b.count }

        mutating func skipSpace() {
            while i < b.count, StrictJSON.isSpace(b[i]) { i += 1 }
        }

        mutating func document() throws(JSONInputError) {
            guard b.count <= limits.maxBytes else { throw fail("input is larger than \(limits.maxBytes) bytes", at: 0) }
            if b.starts(with: [0xEF, 0xBB, 0xBF]) { throw fail("a byte-order mark is not JSON", at: 0) }
            skipSpace()
            guard !atEnd else { throw fail("no JSON value") }
            try value()
            while !stack.isEmpty {
                skipSpace()
                guard !atEnd else {
                    throw fail(stack.last == .array ? "unterminated array: expected ',' or ']'" : "unterminated object: expected ',' or '}'")
                }
                try afterValue()
            }
            skipSpace()
            guard atEnd else { throw fail("unexpected \(show(b[i])) after the JSON value") }
        }

        /// After a value inside a container: ',' then the next value, or the close.
        mutating func afterValue() throws(JSONInputError) {
            let open = stack.last!
            let close: UInt8 = open == .array ? 0x5D : 0x7D
            if b[i] == close {
                i += 1; stack.removeLast(); if open == .object { keys.removeLast() }
                return
            }
            guard b[i] == 0x2C else {
                throw fail("expected ',' or '\(open == .array ? "]" : "}")', found \(show(b[i]))")
            }
            i += 1
            skipSpace()
            if !atEnd, b[i] == close { throw fail("a trailing comma is not JSON") }
            if open == .object { try member() } else { try value() }
        }

        /// One key, its colon, and the start of its value.
        mutating func member() throws(JSONInputError) {
            skipSpace()
            guard !atEnd else { throw fail("unterminated object: expected a key") }
            guard b[i] == 0x22 else { throw fail("expected a key in double quotes, found \(show(b[i]))") }
            let start = i
            let key = try string()
            guard keys[keys.count - 1].insert(key).inserted else { throw fail("duplicate key", at: start) }
            skipSpace()
            guard !atEnd, b[i] == 0x3A else { throw fail("expected ':' after the key") }
            i += 1
            try value()
        }

        /// A value; a container is opened (its contents follow through `afterValue`).
        mutating func value() throws(JSONInputError) {
            skipSpace()
            guard !atEnd else { throw fail("expected a value, found the end of the input") }
            values += 1
            guard values <= limits.maxValues else { throw fail("more than \(limits.maxValues) values") }
            switch b[i] {
            case 0x5B, 0x7B:
                let isArray = b[i] == 0x5B
                guard stack.count < limits.maxDepth else { throw fail("nested deeper than \(limits.maxDepth) levels") }
                i += 1
                stack.append(isArray ? .array : .object)
                if !isArray { keys.append([]) }
                skipSpace()
                guard !atEnd else { throw fail(isArray ? "unterminated array" : "unterminated object") }
                if b[i] == (isArray ? 0x5D : 0x7D) {
                    i += 1; stack.removeLast(); if !isArray { keys.removeLast() }
                } else if isArray {
                    try value()
                } else {
                    try member()
                }
            case 0x22: _ = try string()
            case 0x2D, 0x30...0x39: try number()
            case 0x74: try literal("true")
            case 0x66: try literal("false")
            case 0x6E: try literal("null")
            default: throw fail("expected a value, found \(show(b[i]))")
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONInputError) {
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard i + w.count <= b.count, b[i..<(i + w.count)].elementsEqual(w) else {
                throw fail("expected \(word)")
            }
            i += w.count
        }

        mutating func number() throws(JSONInputError) {
            let start = i
            var mantissaNonZero = false
            if b[i] == 0x2D { i += 1 }
            guard !atEnd, isDigit(b[i]) else { throw fail("expected a digit") }
            if b[i] == 0x30 {
                i += 1
                if !atEnd, isDigit(b[i]) { throw fail("a number with a leading zero is not JSON") }
            } else {
                while !atEnd, isDigit(b[i]) { mantissaNonZero = true; i += 1 }
            }
            if !atEnd, b[i] == 0x2E {
                i += 1
                guard !atEnd, isDigit(b[i]) else { throw fail("expected a digit after '.'") }
                while !atEnd, isDigit(b[i]) { if b[i] != 0x30 { mantissaNonZero = true }; i += 1 }
            }
            if !atEnd, b[i] == 0x65 || b[i] == 0x45 {
                i += 1
                if !atEnd, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
                guard !atEnd, isDigit(b[i]) else { throw fail("expected a digit in the exponent") }
                while !atEnd, isDigit(b[i]) { i += 1 }
            }
            guard i - start <= limits.maxNumberBytes else {
                throw fail("a number longer than \(limits.maxNumberBytes) characters", at: start)
            }
            let value = b[start..<i].withContiguousStorageIfAvailable { span -> Double in
                var text = Array(span); text.append(0)
                return text.withUnsafeBufferPointer { p in p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { strtod($0, nil) } }
            } ?? 0
            if value.isInfinite { throw fail("a number too large for a double", at: start) }
            if value == 0, mantissaNonZero { throw fail("a number too small for a double (it would read as 0)", at: start) }
        }

        /// A string (`i` at its opening quote); returns its bytes, escapes decoded.
        mutating func string() throws(JSONInputError) -> [UInt8] {
            i += 1
            var out: [UInt8] = []
            while true {
                guard !atEnd else { throw fail("unterminated string") }
                let c = b[i]
                switch c {
                case 0x22:
                    i += 1
                    return out
                case 0x5C:
                    try escape(into: &out)
                case 0..<0x20:
                    throw fail("a control character (\(show(c))) in a string must be escaped")
                case 0..<0x80:
                    out.append(c); i += 1
                default:
                    let n = try utf8Sequence()
                    out.append(contentsOf: b[i..<(i + n)]); i += n
                }
            }
        }

        mutating func escape(into out: inout [UInt8]) throws(JSONInputError) {
            guard i + 1 < b.count else { throw fail("unterminated escape") }
            let e = b[i + 1]
            i += 2
            switch e {
            case 0x22, 0x5C, 0x2F: out.append(e)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < b.count, b[i] == 0x5C, b[i + 1] == 0x75 else { throw fail("a lone surrogate \\u escape") }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("a lone surrogate \\u escape")
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
            default:
                throw fail("unknown escape \\\(show(e))", at: i - 2)
            }
        }

        mutating func hex4() throws(JSONInputError) -> UInt32 {
            guard i + 4 <= b.count else { throw fail("expected four hex digits after \\u") }
            var v: UInt32 = 0
            for k in 0..<4 {
                let c = b[i + k]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw fail("expected four hex digits after \\u", at: i + k)
                }
                v = v << 4 | d
            }
            i += 4
            return v
        }

        /// The length of the well-formed UTF-8 sequence at `i` (not ASCII), or throws.
        func utf8Sequence() throws(JSONInputError) -> Int {
            let c = b[i]
            let n: Int, low: UInt8, high: UInt8
            switch c {
            case 0xC2...0xDF: n = 2; low = 0x80; high = 0xBF
            case 0xE0: n = 3; low = 0xA0; high = 0xBF
            case 0xE1...0xEC, 0xEE...0xEF: n = 3; low = 0x80; high = 0xBF
            case 0xED: n = 3; low = 0x80; high = 0x9F
            case 0xF0: n = 4; low = 0x90; high = 0xBF
            case 0xF1...0xF3: n = 4; low = 0x80; high = 0xBF
            case 0xF4: n = 4; low = 0x80; high = 0x8F
            default: throw fail("not UTF-8 (\(show(c)))")
            }
            guard i + n <= b.count, (low...high).contains(b[i + 1]),
                  b[(i + 2)..<(i + n)].allSatisfy({ $0 & 0xC0 == 0x80 }) else { throw fail("not UTF-8 (\(show(c)))") }
            return n
        }

        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

        func show(_ c: UInt8) -> String {
            (0x21..<0x7F).contains(c) ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x" + String(c, radix: 16, uppercase: true)
        }
    }
}
