import FlapConfig
import FlapCore
import FlapMessages
import Logging

/// Every zoned board's frame, composed from the inbox's live messages by the one rule: each zone
/// shows the message its cursor picks among its senders' (priority, hold, rotation), the older
/// zone's part first and the newer drawn over it. A value, with no clock and no lock: the
/// mailroom composes with it on its desk, and `flapd preview` composes with it what a board
/// would show at an instant.
struct WallComposition {
    /// One zone's part of a board, as composed.
    struct Drawn {
        var zone: Zone
        var message: InboxMessage
        var part: Composer.Part
    }

    /// A board's frame and the parts it was drawn from, oldest first.
    struct Board {
        var frame: Frame
        var parts: [Drawn]
    }

    /// Per board index (every board a zone covers).
    var boards: [Int: Board] = [:]
    /// What each zone shows (in the router's order).
    var zoneShows: [StatusReport.ZoneShows] = []
    /// When a rotation or a hold next changes a zone.
    var next: Double?
    /// What to log, once any lock is let go.
    var notes: [(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?)] = []
    /// The part of the message asked for (`posted`), and its board.
    var posted: (part: Composer.Part, board: Int)?

    /// Composes `visible` (live messages, oldest visible first) at `t`; `posted` is the id of a
    /// message whose part to keep aside; `unrouted` keeps the senders already said to be in no zone.
    init(visible: [InboxMessage], router: SenderRouter, cursors: inout [ZoneCursor], config: FlapdConfig, at t: Double,
         unrouted: inout Set<String>, posted postedID: String? = nil) {
        let boards = config.boards
        var routes: [Int: [InboxMessage]] = [:]
        for m in visible {
            let zones = router.zones(for: m)
            if zones.isEmpty, unrouted.insert(m.senderID).inserted {
                notes.append((.notice, "sender is in no zone; its messages are not shown", ["sender": "\(m.senderName)", "id": "\(m.senderID)"]))
            }
            for z in zones { routes[z, default: []].append(m) }
        }
        var drawn: [Int: [Drawn]] = [:]
        for (i, zone) in router.zones.enumerated() where zone.board < boards.count {
            let b = boards[zone.board]
            let (message, again) = cursors[i].pick(routes[i] ?? [], rotateSeconds: zone.rotateSeconds, now: t)
            if let again { next = min(next ?? again, again) }
            zoneShows.append(Mailroom.shows(zone, message, config: config))
            guard let message else { continue }
            let part = Composer().compose(message, in: zone, mapper: b.mapper)
            if let problem = part.problem {
                notes.append((.warning, "message \(message.id) not shown: \(problem)", nil))
                continue
            }
            if !part.cut.isEmpty {
                notes.append((.warning, "message did not fit its zone and was cut", ["id": "\(message.id)", "cut": "\(part.cut.joined(separator: " / "))"]))
            }
            if message.id == postedID, posted == nil { posted = (part, zone.board) }
            guard !zone.pieces.isEmpty else {
                drawn[zone.board, default: []].append(Drawn(zone: zone, message: message, part: part))
                continue
            }
            // A zone on a grid: each board draws its piece of the zone's rectangle.
            for p in zone.pieces where p.board < boards.count {
                var piece = part
                piece.frame = part.frame.cropped(row: p.partRow, col: p.partCol, rows: p.rows.count, cols: p.cols.count)
                let on = Zone(board: p.board, rows: p.rows, cols: p.cols, senders: zone.senders)
                drawn[p.board, default: []].append(Drawn(zone: on, message: message, part: piece))
            }
        }
        for board in Set(router.zones.flatMap { $0.rectangles.map(\.board) }) where board < boards.count {
            let b = boards[board]
            // The older message first, the newer over it (zones in config order when as new).
            let parts = (drawn[board] ?? []).enumerated()
                .sorted { ($0.element.message.visibleAt, $0.offset) < ($1.element.message.visibleAt, $1.offset) }.map(\.element)
            var frame = Frame(rows: b.rows, cols: b.cols, filledWith: b.drum.glyphs[0])
            for d in parts { frame.paste(d.part.frame, row: d.zone.rows.lowerBound, col: d.zone.cols.lowerBound) }
            self.boards[board] = Board(frame: frame, parts: parts)
        }
    }
}

extension WallComposition.Board {
    /// The ids of the message-API messages it shows: those whose part no later part covers.
    var shownIDs: [String] {
        parts.enumerated().compactMap { k, d in
            let covered = parts[(k + 1)...].contains { $0.zone.covers(d.zone) }
            return !covered && !d.message.isOwn ? d.message.id : nil
        }
    }
}
