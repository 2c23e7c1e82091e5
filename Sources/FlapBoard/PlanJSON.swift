import FlapCore

/// A plan as the JSON that `flapd plan` prints: moving modules only, rows and columns from 0,
/// times in milliseconds from the transition's start, glyphs as text.
public enum PlanJSON {
    public static func render(_ plan: FlipPlan) -> String {
        let flip = plan.timing.flip
        var modules: [String] = []
        modules.reserveCapacity(plan.moves.count)
        for m in plan.moves {
            let clacks = (0..<Int(m.flips)).map { ms(m.clack($0, flip: flip)) }.joined(separator: ",")
            modules.append(
                "{\"row\":\(m.row),\"col\":\(m.col),\"from\":\(quote(plan.drum.glyphs[Int(m.from)].text)),"
                + "\"to\":\(quote(plan.drum.glyphs[Int(m.to)].text)),\"flips\":\(m.flips),"
                + "\"direction\":\"\(m.direction > 0 ? "forward" : "backward")\","
                + "\"start_ms\":\(ms(m.start)),\"end_ms\":\(ms(m.end(flip: flip))),\"clacks_ms\":[\(clacks)]}")
        }
        return "{\"rows\":\(plan.rows),\"cols\":\(plan.cols),\"flip_ms\":\(ms(flip)),"
            + "\"column_stagger_ms\":\(ms(plan.timing.columnStagger)),\"row_stagger_ms\":\(ms(plan.timing.rowStagger)),"
            + "\"duration_ms\":\(ms(plan.duration)),\"flip_count\":\(plan.flipCount),"
            + "\"modules\":[\(modules.joined(separator: ","))]}"
    }

    /// Milliseconds, without a fraction when whole.
    static func ms(_ nanos: Int64) -> String {
        nanos % 1_000_000 == 0 ? "\(nanos / 1_000_000)" : "\(Double(nanos) / 1e6)"
    }

    static func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

