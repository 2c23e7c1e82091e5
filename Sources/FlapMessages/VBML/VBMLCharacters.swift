import FlapCore
/// The characters VBML turns into Vestaboard codes, as Vestaboard's own library does: each code
/// with the characters that fold to it (its first is the one it is written as), the characters
/// written as several (`½` → `1/2`), and the emoji that stand for chips.
enum VBMLCharacters {
    /// Code → the characters that fold to it; the first is the code's own character. A character
    /// listed under several codes folds to the first (in code order).
    static let table: [(code: Int, characters: String)] = [
        (0, " ©®<>²†‡ˆÞþµ¶*^¬«»›³¹€‹˜÷π∆√∫∞"),
        (1, "Aaâàåá\u{C0}\u{C1}\u{C2}\u{C3}\u{C5}ãäÄ∂œæÆ"),
        (2, "Bb"), (3, "CcçÇ¢ćĆčČ"), (4, "DdÐð"), (5, "EeéêëèÈÉÊË€£∑"), (6, "Ffƒſ"),
        (7, "GgğĞģĢġĠĝĜ"), (8, "HhħĦĥĤ"), (9, "IiíïîìÌÍÎÏ|¡"), (10, "JjĵĴįĮ"), (11, "KkķĶĸ"),
        (12, "Ll£łŁļĻĺĹľĽŀĿ"), (13, "Mm"), (14, "NnñÑńŃňŇņŅ"), (15, "OoóôòÒÓÔÕØðõøöÖ"),
        (16, "PpÞþ¶"), (17, "Qq"), (18, "RrŕŔřŘŗŖ"), (19, "SsšŠ§śŚşŞșȘ"), (20, "TtťŤţŢŧŦ"),
        (21, "UuûùúÙÚÛµūŪůŮųŲÜ"), (22, "VvƲʋ"), (23, "WwŵŴẁẀẃẂẅẄ"), (24, "XxẍẌ"),
        (25, "YyýÿÝŷŶỳỲỹỸŸ"), (26, "ZzžŽźŹżŻ"),
        (27, "1¹"), (28, "2²"), (29, "3³"), (30, "4"), (31, "5"), (32, "6"), (33, "7"), (34, "8"), (35, "9"), (36, "0"),
        (37, "!ǃ"), (38, "@"), (39, "#№"), (40, "$¢£¤¥₩₪₫€₹₺₽"), (41, "([{⟨«"), (42, ")]}⟩»"), (44, "-—–¯~_"),
        (46, "+±∓∔"), (47, "&"), (48, "=≠≈≡"), (49, ";；"), (50, ":¦"),
        (52, "'\u{2018}\u{2019}`´‚‛ʹʻʽʾʿˈˊˋ"), (53, "\"„\u{201C}\u{201D}¨˝ˮ˵˶‟"), (54, "%‰‱"), (55, ",¸‚，、､"), (56, ".․‥…"),
        (59, "/\\⁄∕⧸⫻⫽⧵"), (60, "?¿"), (62, "°˚º¤•·∙∘⚬⦿⨀⨁⨂\u{2764}🧡💛💚💙💜🖤🤍🤎"),
        (63, ""), (64, ""), (65, ""), (66, ""), (67, ""), (68, ""), (69, ""), (70, ""), (71, ""),
    ]

    /// The codes VBML accepts as `{NN}` (Vestaboard's set: 43, 45, 51, 57, 58 and 61 are not codes).
    static let validCodes: Set<Int> = Set(table.map(\.code))

    /// Character → code (the first code that lists it).
    static let codes: [Unicode.Scalar: Int] = {
        var map: [Unicode.Scalar: Int] = [:]
        for (code, characters) in table { for s in characters.unicodeScalars where map[s] == nil { map[s] = code } }
        return map
    }()

    /// Character → the code's own character, lower-cased, for characters VBML folds.
    static let folded: [Unicode.Scalar: String] = {
        var map: [Unicode.Scalar: String] = [:]
        for (_, characters) in table {
            guard let first = characters.unicodeScalars.first else { continue }
            for s in characters.unicodeScalars where map[s] == nil { map[s] = String(first).lowercased() }
        }
        return map
    }()

    /// Characters kept as they are: each code's own character in both cases, and the few that
    /// later steps read (line breaks, braces, chips, the heart).
    static let kept: Set<Unicode.Scalar> = {
        var set = Set("\n\u{201C}\u{2019}{}⬜🟥🟧🟨🟩🟦🟪⬛\u{2764}".unicodeScalars)
        for (_, characters) in table {
            guard let first = characters.unicodeScalars.first else { continue }
            set.formUnion(String(first).lowercased().unicodeScalars)
            set.formUnion(String(first).uppercased().unicodeScalars)
        }
        return set
    }()

    /// Characters written as several.
    static let expanded: [Unicode.Scalar: String] = [
        "½": "1/2", "¼": "1/4", "¾": "3/4", "⅓": "1/3", "⅔": "2/3", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8",
        "⅞": "7/8", "⅐": "1/7", "⅑": "1/9", "⅒": "1/10", "æ": "AE", "Æ": "AE", "ß": "SS", "œ": "OE",
        "Œ": "OE", "™": "TM", "ü": "UE", "Ä": "AE", "ä": "AE", "Ö": "OE", "ö": "OE", "Ü": "UE", "ẞ": "SS",
        "…": "...",
    ]

    /// Emoji written in a template that stand for codes (replaced before props are filled in).
    static func replacingEmoji(_ text: String) -> String {
        var out = ""
        var scalars = Array(text.unicodeScalars)[...]
        let chips: [Unicode.Scalar: Int] = ["🟥": 63, "🟧": 64, "🟨": 65, "🟩": 66, "🟦": 67, "🟪": 68, "⬜": 69, "⬛": 70]
        while let s = scalars.popFirst() {
            if let code = chips[s] { out += "{\(code)}" }
            else if s == "ß" { out += "SS" }
            else if s == "\u{2764}", scalars.first == "\u{FE0F}" { scalars.removeFirst(); out += "{62}" }
            else { out.unicodeScalars.append(s) }
        }
        return out
    }

    /// Every character folded to one VBML can write: expanded, kept, folded, or a blank.
    static func sanitized(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars {
            if s == "\u{FE0F}" { continue }
            if let many = expanded[s] { out += many }
            else if kept.contains(s) { out.unicodeScalars.append(s) }
            else if let f = folded[s] { out += f }
            else { out += " " }
        }
        return out
    }

    /// A line's codes: `{NN}` is that code; a character without a code is left out.
    static func lineCodes(_ line: [Unicode.Scalar], component: String) throws(VBMLDocument.Problem) -> [Int] {
        var codes: [Int] = []
        var i = 0
        while i < line.count {
            let s = line[i]
            if s == "{" {
                guard let close = line[i...].firstIndex(of: "}") else {
                    throw VBMLDocument.Problem("\(component): '{' without a closing '}'")
                }
                let inside = String(String.UnicodeScalarView(line[(i + 1)..<close]))
                guard let code = Int(inside), validCodes.contains(code) else {
                    throw VBMLDocument.Problem("\(component): {\(inside.prefix(12))} is not a Vestaboard character code")
                }
                codes.append(code)
                i = close + 1
            } else {
                if s != "}", let code = Self.codes[s] { codes.append(code) }
                i += 1
            }
        }
        return codes
    }
}
