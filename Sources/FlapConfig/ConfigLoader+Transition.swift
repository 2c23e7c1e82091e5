import FlapCore
import Yams

extension ConfigLoader {
    /// A board's transition style (or the default of every board): a name — `transition: wave` —
    /// or a mapping of `style` (classic, wave, drift, curtain, together), `speed` (gentle, fast),
    /// or Vestaboard's `strategy`, `step_size`, `step_interval_ms`; and `arrival`, `max_moving`.
    static func transition(_ parent: ConfigNode, default d: TransitionStyle) -> TransitionStyle {
        guard let value = parent.value("transition") else { return d }
        var fields = TransitionFields()
        let node: ConfigNode
        if value.scalar != nil {
            fields.transition = value.string
            node = ConfigNode(nil, path: parent.sub("transition"), issues: parent.issues)
        } else {
            node = parent.child("transition")
            fields.transition = node.string("style")
            fields.speed = node.string("speed")
            fields.strategy = node.string("strategy")
            fields.arrival = node.string("arrival")
            if node.value("step_size") != nil { fields.stepSize = node.int("step_size", default: 1, in: Int.min...Int.max) }
            if node.value("step_interval_ms") != nil { fields.stepIntervalMs = node.int("step_interval_ms", default: 40, in: Int.min...Int.max) }
            if node.value("max_moving") != nil { fields.maxMoving = node.int("max_moving", default: 1, in: Int.min...Int.max) }
            node.rejectUnknownKeys()
        }
        do { return try fields.style(over: d) } catch {
            // The config calls the app's name `style`.
            let key = error.field == "transition" ? "style" : error.field
            let at = value.scalar != nil ? parent.sub("transition") : node.sub(key)
            parent.issues.add(at, value.scalar != nil ? value : node.value(key) ?? value,
                              error.problem.replacingOccurrences(of: "or transition", with: "or style"))
            return d
        }
    }
}
