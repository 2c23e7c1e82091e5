/// A board's state topic (`<topic>/<board>/state`), published once the board is still: its text
/// and rows, who it shows (the first zone's sender and message; null when none), every zone on
/// it, and how many modules are well and faulty.
struct MQTTBoardState: Encodable {
    struct Zone: Encodable {
        var rows: [Int]
        var cols: [Int]
        var sender: String?
        var messageID: String?
        enum CodingKeys: String, CodingKey { case rows, cols, sender, messageID = "message_id" }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(rows, forKey: .rows)
            try c.encode(cols, forKey: .cols)
            try c.encode(sender, forKey: .sender)
            try c.encode(messageID, forKey: .messageID)
        }
    }
    var text: String
    var rows: [String]
    var sender: String?
    var messageID: String?
    var zones: [Zone]
    var modulesOK: Int
    var modulesFaulty: Int
    enum CodingKeys: String, CodingKey {
        case text, rows, sender, zones, messageID = "message_id", modulesOK = "modules_ok", modulesFaulty = "modules_faulty"
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(text, forKey: .text)
        try c.encode(rows, forKey: .rows)
        try c.encode(sender, forKey: .sender)
        try c.encode(messageID, forKey: .messageID)
        try c.encode(zones, forKey: .zones)
        try c.encode(modulesOK, forKey: .modulesOK)
        try c.encode(modulesFaulty, forKey: .modulesFaulty)
    }
}

/// A board's modules topic (`<topic>/<board>/modules`): how many modules are faulty, which
/// (`"row,col"`, from 0, as the log names them), and — for boards with home sensors — each
/// module's worst magnet error of its latest passes where it is not 0 (issue 35).
struct MQTTModulesState: Encodable {
    var faulty: Int
    var which: [String]
    var worstMagnetError: [String: Int]
    enum CodingKeys: String, CodingKey { case faulty, which, worstMagnetError = "worst_magnet_error" }
}
