import FlapCore
import EndToEndSupport
import FlapMessages
import Foundation
import Testing

/// Issue 15, item 2: flapd's VBML renderer against pyvbml 0.3.1 (PyPI; the Python port of
/// Vestaboard's library, which Home Assistant's integration uses) on generated documents. The
/// generator stays outside the cases where pyvbml is known to differ from Vestaboard's library
/// (HTML-escapable characters in props, `{{{x}}}` and dotted props, string rawCharacters, the
/// apostrophe ’, empty absolutePosition; the script itself leaves out text taller than its
/// component when centred); `VBMLTests` covers those from the documentation.
@Suite struct VBMLReferenceTests {
    /// Seeded dice (FlapCore's SplitMix64), so a failure names a document that can be made again.
    struct Dice {
        var random: SeededRandom
        init(state: UInt64) { random = SeededRandom(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
    }

    static let pieces = ["!", "@", "#", "$", "(", ")", "-", "+", "&", "=", ";", ":", "'", "\"", "%", ",", ".", "/", "?", "°",
                         "\n", "\n\n", "🟥", "🟦", "⬛", "⬜", "❤️", "é", "ñ", "ü", "½", "ß", "[", "{63}", "{0}", "{71}", "{27}", "  "]

    static func text(_ d: inout Dice, props: [String]) -> String {
        var out = ""
        for _ in 0..<d.int(1...14) {
            switch d.int(1...10) {
            case 1...5:
                let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                out += String((0..<d.int(1...(d.chance(10) ? 30 : 9))).map { _ in d.pick(letters) })
            case 6...8: out += d.pick(pieces)
            default: out += props.isEmpty ? "x" : "{{\(d.pick(props))}}"
            }
            if d.chance(70) { out += " " }
        }
        return out
    }

    static func document(_ d: inout Dice) -> [String: Any] {
        var doc: [String: Any] = [:]
        var propNames: [String] = []
        if d.chance(40) {
            var props: [String: Any] = [:]
            for i in 0..<d.int(1...3) {
                propNames.append("p\(i)")
                props["p\(i)"] = d.chance(70) ? String((0..<d.int(0...12)).map { _ in d.pick(Array("ABC xyz 0123")) }) : d.int(0...999)
            }
            doc["props"] = props
        }
        var height = 6, width = 22
        if d.chance(30) {
            (height, width) = d.chance(50) ? (3, 15) : (d.int(1...6), d.int(1...22))
            doc["style"] = ["height": height, "width": width]
        }
        var components: [[String: Any]] = []
        for _ in 0..<d.int(1...4) {
            var c: [String: Any] = [:]
            var style: [String: Any] = [:]
            switch d.int(1...20) {
            case 1...3:
                c["rawCharacters"] = (0..<d.int(1...3)).map { _ in (0..<d.int(1...8)).map { _ in d.pick(Array(0...42) + [44, 46, 47, 62, 63, 70, 71]) } }
                    .map { row in row }  // rows may differ in length, as the library allows
            case 4...5:
                var cal: [String: Any] = ["month": d.int(1...12), "year": d.int(2020...2031)]
                if d.chance(50) { cal["defaultDayColor"] = d.int(63...70) }
                if d.chance(60) { cal["days"] = Dictionary((0..<d.int(1...3)).map { _ in ("\(d.int(1...31))", d.int(63...70)) }, uniquingKeysWith: { a, _ in a }) }
                for flag in ["hideSMTWTFS", "hideDates", "hideMonthYear"] where d.chance(20) { cal[flag] = true }
                c["calendar"] = cal
                if d.chance(40) { style["absolutePosition"] = ["x": d.int(0...12), "y": 0] }
            case 6: c["template"] = "BAD {\(d.pick([43, 45, 51, 57, 58, 61, 72]))}"
            default:
                c["template"] = text(&d, props: propNames)
                if d.chance(70) { style["justify"] = d.pick(["left", "right", "center", "justified"]) }
                if d.chance(70) { style["align"] = d.pick(["top", "bottom", "center", "justified"]) }
                if d.chance(50) { style["width"] = d.int(1...width) }
                if d.chance(50) { style["height"] = d.int(1...height) }
                if d.chance(15) { style["absolutePosition"] = ["x": d.int(0...width - 1), "y": d.int(0...height - 1)] }
            }
            if !style.isEmpty { c["style"] = style }
            components.append(c)
        }
        doc["components"] = components
        return doc
    }

    @Test(.timeLimit(.minutes(10))) func rendersAsPyvbmlOnGeneratedDocuments() async throws {
        let dir = try scratchDirectory("flap-vbml")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var dice = Dice(state: 20261126)
        let documents = try (0..<600).map { _ in
            String(decoding: try JSONSerialization.data(withJSONObject: Self.document(&dice), options: [.sortedKeys]), as: UTF8.self)
        }
        try documents.joined(separator: "\n").appending("\n").write(toFile: dir + "/docs.jsonl", atomically: true, encoding: .utf8)
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the client venv: \(venv.stderr)")
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let pyvbml = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/pyvbml-render.py", dir + "/docs.jsonl"], executable: python)
        try #require(await pyvbml.waitForSlowExit() == 0, "\(pyvbml.stderr)")
        let answers = pyvbml.stdout.split(separator: "\n")
        try #require(answers.count == documents.count, "\(pyvbml.stderr)")
        var same = 0, refusedByBoth = 0, excluded = 0
        for (doc, answer) in zip(documents, answers) {
            let reference = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
            if reference["excluded"] != nil { excluded += 1; continue }
            let ours: Result<[[Int]], VBMLDocument.Problem>
            do throws(VBMLDocument.Problem) {
                ours = .success(try VBML.render(try VBMLDocument.decode(Data(doc.utf8)), rows: 6, cols: 22))
            } catch { ours = .failure(error) }
            switch (ours, reference["rows"] as? [[Int]]) {
            case (.success(let rows), .some(let expected)):
                #expect(rows == expected, "\(doc)")
                if rows == expected { same += 1 }
            case (.failure, nil): refusedByBoth += 1
            case (.success, nil): Issue.record("pyvbml refused what flapd renders: \(reference["error"] ?? "") — \(doc)")
            case (.failure(let p), .some): Issue.record("flapd refused what pyvbml renders: \(p) — \(doc)")
            }
        }
        print("VBML against pyvbml: \(same) rendered the same, \(refusedByBoth) refused by both, \(excluded) left out (known differences), of \(documents.count)")
        #expect(same >= 400, "most generated documents are compared, not left out")
        #expect(refusedByBoth >= 10, "the generator also makes documents both refuse")
    }
}
