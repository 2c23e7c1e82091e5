import ArgumentParser
import FlapCore

/// The options that choose a transition (`flapd plan`): a style or strategy and its steps, the
/// arrival, a cap on moving modules, the random order's seed.
struct TransitionOptions: ParsableArguments {
    @Option(help: "The transition: classic, wave, drift, curtain, together, or a strategy (column, reverse-column, edges-to-center, row, diagonal, random). Default: the board's.")
    var style: String?
    @Option(help: "gentle or fast (with --style).")
    var speed: String?
    @Option(name: .customLong("step-size"), help: "Columns, rows or modules a step (1-132).")
    var stepSize: Int?
    @Option(name: .customLong("step-interval-ms"), help: "Milliseconds between steps (1-3000).")
    var stepIntervalMs: Int?
    @Option(help: "cascade, or together: every module lands on one instant.")
    var arrival: String?
    @Option(name: .customLong("arrive-ms"), help: "Every module lands this many ms after the start (or as soon after as it can).")
    var arriveMs: Int?
    @Option(name: .customLong("max-moving"), help: "At most this many modules turn at once.")
    var maxMoving: Int?
    @Option(help: "The order of the random strategy.")
    var seed: UInt64?


    /// The style these options make of a board's own; a wrong option is named.
    func style(over base: TransitionStyle) throws -> TransitionStyle {
        let isStrategy = style.map { TransitionStyle.Order(rawValue: $0) != nil && TransitionStyle.names[$0] == nil } ?? false
        let fields = TransitionFields(strategy: isStrategy ? style : nil, stepSize: stepSize, stepIntervalMs: stepIntervalMs,
                                      transition: isStrategy ? nil : style, speed: speed, arrival: arrival, maxMoving: maxMoving)
        var chosen: TransitionStyle
        do throws(TransitionFields.Invalid) { chosen = try fields.style(over: base) } catch {
            if error.field == "transition", let name = style {
                throw fail("--style: '\(name)' is not a style (\(TransitionStyle.names.keys.sorted().joined(separator: ", "))) or a strategy (\(TransitionStyle.Order.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            throw fail("--\(error.field == "transition" || error.field == "strategy" ? "style" : error.field.replacingOccurrences(of: "_", with: "-")): \(error.problem)")
        }
        if let ms = arriveMs {
            guard (0...86_400_000).contains(ms) else { throw fail("--arrive-ms: \(ms) is outside 0–86400000") }
            chosen.arrival = .at(Int64(ms) * 1_000_000)
        }
        if let seed { chosen.seed = seed }
        return chosen
    }
}
