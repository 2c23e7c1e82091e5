import FlapCore
import FlapInput
import Foundation

/// A VBML document (Vestaboard Markup Language): props, an optional size, and components that
/// `VBML.render` lays out into rows of Vestaboard codes. Read with `VBMLDocument.decode`, which
/// names the field that is wrong.
public struct VBMLDocument: Codable, Equatable, Sendable {
    public var props: [String: VBMLValue]?
    public var style: Size?
    public var components: [Component]

    public init(props: [String: VBMLValue]? = nil, style: Size? = nil, components: [Component]) {
        self.props = props; self.style = style; self.components = components
    }

    /// The document's own size; the board's (or zone's) where absent.
    public struct Size: Codable, Equatable, Sendable {
        public var height: Int?
        public var width: Int?
        public init(height: Int? = nil, width: Int? = nil) { self.height = height; self.width = width }
    }

    /// One component: exactly one of `template`, `rawCharacters`, `randomColors`, `calendar`.
    public struct Component: Codable, Equatable, Sendable {
        public var template: String?
        /// Rows of codes, as an array, or as a string holding that array in JSON.
        public var rawCharacters: RawCharacters?
        public var randomColors: RandomColors?
        public var calendar: Calendar?
        public var style: Style?

        public init(template: String? = nil, rawCharacters: [[Int]]? = nil, randomColors: RandomColors? = nil,
                    calendar: Calendar? = nil, style: Style? = nil) {
            self.template = template; self.rawCharacters = rawCharacters.map(RawCharacters.init)
            self.randomColors = randomColors; self.calendar = calendar; self.style = style
        }
    }

    public struct RawCharacters: Codable, Equatable, Sendable {
        public var rows: [[Int]]
        public init(_ rows: [[Int]]) { self.rows = rows }
        public init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if let rows = try? single.decode([[Int]].self) { self.rows = rows; return }
            guard let text = try? single.decode(String.self), case .success(let rows) = PatternCodes.parse(text) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "is not rows of codes")
            }
            self.rows = rows
        }
        public func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(rows)
        }
    }

    public struct RandomColors: Codable, Equatable, Sendable {
        /// The codes to draw from; the eight colour chips (63…70) where absent.
        public var colors: [Int]?
        public init(colors: [Int]? = nil) { self.colors = colors }
    }

    /// A month as a grid: `month/yy`, the days of the week, date ranges and a chip per day.
    public struct Calendar: Codable, Equatable, Sendable {
        public var month: VBMLNumber
        public var year: VBMLNumber
        public var defaultDayColor: Int?
        /// Day of the month → the code of its chip.
        public var days: [String: Int]?
        public var hideSMTWTFS: Bool?
        public var hideDates: Bool?
        public var hideMonthYear: Bool?
        public init(month: Int, year: Int, defaultDayColor: Int? = nil, days: [String: Int]? = nil,
                    hideSMTWTFS: Bool? = nil, hideDates: Bool? = nil, hideMonthYear: Bool? = nil) {
            self.month = VBMLNumber(month); self.year = VBMLNumber(year); self.defaultDayColor = defaultDayColor
            self.days = days; self.hideSMTWTFS = hideSMTWTFS; self.hideDates = hideDates; self.hideMonthYear = hideMonthYear
        }
    }

    public struct Style: Codable, Equatable, Sendable {
        public var justify: Justify?
        public var align: Align?
        public var width: Int?
        public var height: Int?
        public var absolutePosition: Position?
        public init(justify: Justify? = nil, align: Align? = nil, width: Int? = nil, height: Int? = nil, absolutePosition: Position? = nil) {
            self.justify = justify; self.align = align; self.width = width; self.height = height; self.absolutePosition = absolutePosition
        }
    }

    public enum Justify: String, Codable, Sendable, CaseIterable { case left, right, center, justified }
    public enum Align: String, Codable, Sendable, CaseIterable { case top, bottom, center, justified, absolute }

    public struct Position: Codable, Equatable, Sendable {
        public var x: Int?
        public var y: Int?
        public init(x: Int? = nil, y: Int? = nil) { self.x = x; self.y = y }
    }

    /// Why a document could not be read or rendered, and where (`components[1].style.width`).
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// How much JSON a document may be: checked before Foundation's decoder sees it, which traps
    /// (a deadly signal, not an error) on some input, such as 513 `[` (swift-foundation 6.x).
    public static let limits = JSONLimits()

    /// Reads a document from JSON; the problem names the field, or the byte where the JSON is not
    /// strict JSON within `limits`. A message's content holds the document as text, inside the JSON
    /// that a door checked, so this is where the document itself is checked.
    public static func decode(_ json: Data) throws(Problem) -> VBMLDocument {
        do throws(JSONInputError) { try StrictJSON.check(Array(json), limits: limits) } catch {
            throw Problem("not JSON within the limits: \(error.description)")
        }
        do { return try JSONDecoder().decode(VBMLDocument.self, from: json) } catch let error as DecodingError {
            throw Problem(describe(error))
        } catch {
            throw Problem("VBML is not readable")
        }
    }

    /// The document as compact JSON, as a message's content keeps it.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.reduce("") { s, k in k.intValue.map { "\(s)[\($0)]" } ?? (s.isEmpty ? k.stringValue : "\(s).\(k.stringValue)") }
        }
        switch error {
        case .typeMismatch(let type, let c):
            let what = type == Int.self ? "a whole number" : type == String.self ? "text" : type == Bool.self ? "true or false"
                : "\(type)".hasPrefix("Array") ? "an array" : "an object"
            return "\(place(c.codingPath)) is not \(what)"
        case .dataCorrupted(let c):
            if c.codingPath.isEmpty { return "VBML is not JSON" }
            let last = c.codingPath.last?.stringValue ?? ""
            switch last {
            case "justify": return "\(place(c.codingPath)) is not left, right, center or justified"
            case "align": return "\(place(c.codingPath)) is not top, bottom, center, justified or absolute"
            case "rawCharacters": return "\(place(c.codingPath)) is not rows of codes"
            default: return "\(place(c.codingPath)) is not readable: \(c.debugDescription)"
            }
        case .valueNotFound(_, let c): return "\(place(c.codingPath)) is null"
        case .keyNotFound(let k, let c): return "\(place(c.codingPath + [k])) is missing"
        @unknown default: return "VBML is not readable"
        }
    }
}

/// A number VBML may write as a number or as text (`"month": "11"`).
public struct VBMLNumber: Codable, Equatable, Sendable {
    public var value: Int
    public init(_ value: Int) { self.value = value }
    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if let n = try? single.decode(Int.self) { value = n; return }
        guard let text = try? single.decode(String.self), let n = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: decoder.codingPath, debugDescription: "not a number"))
        }
        value = n
    }
    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(value)
    }
}

/// A value of `props`: any JSON.
public enum VBMLValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([VBMLValue])
    case object([String: VBMLValue])

    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let b = try? single.decode(Bool.self) { self = .bool(b) }
        else if let n = try? single.decode(Double.self) { self = .number(n) }
        else if let s = try? single.decode(String.self) { self = .string(s) }
        else if let a = try? single.decode([VBMLValue].self) { self = .array(a) }
        else { self = .object(try single.decode([String: VBMLValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let b): try single.encode(b)
        case .number(let n): try single.encode(n)
        case .string(let s): try single.encode(s)
        case .array(let a): try single.encode(a)
        case .object(let o): try single.encode(o)
        }
    }

    /// The value as text, as JavaScript writes it (`5`, `2.5`, `true`, `a,b`).
    public var text: String {
        switch self {
        case .null: ""
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): s
        case .array(let a): a.map(\.text).joined(separator: ",")
        case .object: "[object Object]"
        }
    }

    /// Whether a section `{{#x}}` shows: JavaScript's truthiness (an empty list shows nothing).
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let b): b
        case .number(let n): n != 0 && !n.isNaN
        case .string(let s): !s.isEmpty
        case .array(let a): !a.isEmpty
        case .object: true
        }
    }
}
