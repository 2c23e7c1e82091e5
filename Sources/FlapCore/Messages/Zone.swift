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
        board == other.board && rows.overlaps(other.rows) && cols.overlaps(other.cols)
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
