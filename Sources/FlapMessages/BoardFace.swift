import FlapCore
import Foundation

/// How a board shows the message API's senders, as the board tells the hub (`board.face`), so a
/// sender's page can preview a message as this wall will lay it out: each zone that takes API
/// senders — the senders it lists, or everyone no zone lists — with its size, layout, name line
/// and the flaps of its drum. Zones only for the local sender are left out.
public struct BoardFace: Codable, Equatable, Sendable {
    public struct Area: Codable, Equatable, Sendable {
        /// The senders listed (ids or usernames); nil: every sender no area lists.
        public var senders: [String]?
        public var rows: Int
        public var cols: Int
        public var nameLine: Bool
        public var horizontal: String
        public var vertical: String
        /// The drum's flaps as Vestaboard codes, in drum order.
        public var drum: [Int]
        /// Configured substitutes: the character or `{NN}` as written → the code shown.
        public var substitutes: [String: Int]
        public var fallback: Int
    }

    public var areas: [Area]

    /// Bounds of a face a board sends: areas, rows and columns of each (and modules in all),
    /// senders listed, substitutes.
    public static let maxAreas = 32, maxSide = 128, maxModules = 8192, maxSenders = 256, maxSubstitutes = 256

    public init(areas: [Area]) { self.areas = areas }

    /// The face of these zones, each drawn with `mapper(zone.board)`.
    public init(zones: [Zone], mapper: (Int) -> GlyphMapper) {
        areas = zones.compactMap { z in
            let senders: [String]?
            switch z.senders {
            case .everyoneElse: senders = nil
            case .listed(let names):
                senders = names.filter { $0 != InboxMessage.localSenderID }
                if senders!.isEmpty { return nil }
            }
            let m = mapper(z.board)
            return Area(senders: senders, rows: z.rows.count, cols: z.cols.count, nameLine: z.nameLine,
                        horizontal: z.layout.horizontal.rawValue, vertical: z.layout.vertical.rawValue,
                        drum: m.drum.glyphs.map { Int($0.code) }, substitutes: m.substitutes.mapValues { Int($0.code) },
                        fallback: Int(m.fallback.code))
        }
    }

    /// The area a sender's messages land in: the first that lists its id or username, else the
    /// first for everyone else (as the board's router; a sender in several zones is previewed in
    /// the first). Nil when the board shows no message of this sender.
    public func area(senderID: String, username: String) -> Area? {
        let keys = [senderID.lowercased(), username.lowercased()]
        return areas.first { $0.senders?.contains { keys.contains($0.lowercased()) } == true } ?? areas.first { $0.senders == nil }
    }

    /// Why this face cannot be taken (a bound passed or a value that means nothing), or nil.
    public var problem: String? {
        guard areas.count <= Self.maxAreas else { return "more than \(Self.maxAreas) areas" }
        for (i, a) in areas.enumerated() {
            let at = "area \(i + 1)"
            guard (1...Self.maxSide).contains(a.rows), (1...Self.maxSide).contains(a.cols), a.rows * a.cols <= Self.maxModules else {
                return "\(at): rows and cols must be 1–\(Self.maxSide), \(Self.maxModules) modules at most"
            }
            guard (a.senders?.count ?? 0) <= Self.maxSenders, a.substitutes.count <= Self.maxSubstitutes,
                  a.substitutes.keys.allSatisfy({ $0.count <= 8 }) else {
                return "\(at): more than \(Self.maxSenders) senders or \(Self.maxSubstitutes) substitutes, or a long substitute"
            }
            guard HorizontalAlignment(rawValue: a.horizontal) != nil, VerticalAlignment(rawValue: a.vertical) != nil else {
                return "\(at): layout '\(a.horizontal.prefix(16))/\(a.vertical.prefix(16))' is not one"
            }
            guard (try? Self.drum(a.drum)) != nil else { return "\(at): drum must be 1–72 distinct Vestaboard codes" }
            guard a.substitutes.values.allSatisfy({ Glyph(code: $0) != nil }), Glyph(code: a.fallback) != nil else {
                return "\(at): a substitute or the fallback is not a Vestaboard code"
            }
        }
        return nil
    }

    private static func drum(_ codes: [Int]) throws -> Drum {
        var glyphs: [Glyph] = []
        for code in codes {
            guard let g = Glyph(code: code) else { throw DrumError.unknownGlyph("{\(code)}") }
            glyphs.append(g)
        }
        return try Drum(glyphs)
    }

    /// The zone and mapper the composer needs for an area (nil for an area `problem` refuses).
    public static func composing(_ a: Area) -> (zone: Zone, mapper: GlyphMapper)? {
        guard let h = HorizontalAlignment(rawValue: a.horizontal), let v = VerticalAlignment(rawValue: a.vertical),
              let drum = try? drum(a.drum), let fallback = Glyph(code: a.fallback) else { return nil }
        var subs: [String: Glyph] = [:]
        for (k, code) in a.substitutes { subs[k] = Glyph(code: code) }
        return (Zone(rows: 0..<a.rows, cols: 0..<a.cols, layout: Layout(horizontal: h, vertical: v), nameLine: a.nameLine),
                GlyphMapper(drum: drum, substitutes: subs, fallback: fallback))
    }

    /// What a board that has not said is taken to be: flapd's default, one 6 × 22 area for
    /// everyone on the virtual board's extended drum.
    public static let assumed = BoardFace(zones: [Zone(rows: 0..<6, cols: 0..<22)], mapper: { _ in GlyphMapper(drum: .extended) })
}
