import FlapCore
/// A rectangle of one board that shows messages of the senders it lists.
public struct Zone: Hashable, Sendable {
    /// Which senders a zone takes.
    public enum Senders: Hashable, Sendable {
        /// These senders, each named by id or username.
        case listed([String])
        /// Every sender no zone lists (`*`).
        case everyoneElse
    }

    /// The index of the board in the daemon's list.
    public var board: Int
    public var rows: Range<Int>
    public var cols: Range<Int>
    public var senders: Senders
    public var layout: Layout
    /// Whether the first row shows the sender's name.
    public var nameLine: Bool
    /// With several live senders: show each this many seconds in turn; nil: show the latest.
    public var rotateSeconds: Double?
    /// A zone on a grid of boards: `rows` and `cols` count in the grid, `board` is its first
    /// board, and these are its parts on each board. Empty for a zone on one board.
    public var pieces: [Piece] = []

    /// The part of a grid's zone on one board: where it is on the board, and where that part
    /// begins in the zone's own rectangle.
    public struct Piece: Hashable, Sendable {
        public var board: Int
        public var rows: Range<Int>
        public var cols: Range<Int>
        public var partRow: Int
        public var partCol: Int
        public init(board: Int, rows: Range<Int>, cols: Range<Int>, partRow: Int, partCol: Int) {
            self.board = board; self.rows = rows; self.cols = cols; self.partRow = partRow; self.partCol = partCol
        }
    }

    /// The zone's rectangles, one per board it covers.
    public var rectangles: [Piece] {
        pieces.isEmpty ? [Piece(board: board, rows: rows, cols: cols, partRow: 0, partCol: 0)] : pieces
    }

    public init(board: Int = 0, rows: Range<Int>, cols: Range<Int>, senders: Senders = .everyoneElse,
                layout: Layout = Layout(), nameLine: Bool = false, rotateSeconds: Double? = nil) {
        self.board = board
        self.rows = rows
        self.cols = cols
        self.senders = senders
        self.layout = layout
        self.nameLine = nameLine
        self.rotateSeconds = rotateSeconds
    }

    /// Whether it lists the local sender (`@local`).
    public var takesLocal: Bool {
        if case .listed(let names) = senders { names.contains(InboxMessage.localSenderID) } else { false }
    }

    /// Whether every module of `other` is one of this zone's.
    public func covers(_ other: Zone) -> Bool {
        board == other.board && rows.lowerBound <= other.rows.lowerBound && rows.upperBound >= other.rows.upperBound
            && cols.lowerBound <= other.cols.lowerBound && cols.upperBound >= other.cols.upperBound
    }

    /// Whether two zones share a module.
    public func overlaps(_ other: Zone) -> Bool {
        rectangles.contains { a in
            other.rectangles.contains { b in a.board == b.board && a.rows.overlaps(b.rows) && a.cols.overlaps(b.cols) }
        }
    }
}

/// Routes senders to zones as the config file says: a sender goes to every zone that lists
/// its id or username; a sender no zone lists goes to the `*` zones; with no `*` zone it is
/// not shown. The local sender goes only to zones that list `@local`, never to `*` zones.
public struct SenderRouter: Sendable {
    public let zones: [Zone]
    private let listed: Set<String>

    public init(zones: [Zone]) {
        self.zones = zones
        var names: Set<String> = []
        for z in zones { if case .listed(let s) = z.senders { names.formUnion(s.map { $0.lowercased() }) } }
        listed = names
    }

    /// The indices of the zones that show this message's sender.
    public func zones(for message: InboxMessage) -> [Int] {
        if message.isLocal {
            return zones.indices.filter { zones[$0].takesLocal }
        }
        let keys = [message.senderID.lowercased(), message.senderName.lowercased()].filter { $0 != InboxMessage.localSenderID }
        let isListed = keys.contains { listed.contains($0) }
        return zones.indices.filter { i in
            switch zones[i].senders {
            case .listed(let names): names.contains { keys.contains($0.lowercased()) }
            case .everyoneElse: !isListed
            }
        }
    }
}
