import FlapCore
import Foundation

/// Fills a component's template with the document's props, as the Mustache templates of
/// Vestaboard's library do: `{{name}}` (HTML-escaped, as Mustache does), `{{{name}}}` and
/// `{{& name}}` (as they are), dotted names, `{{#list}}…{{/list}}` sections with `{{.}}`,
/// inverted sections `{{^name}}`, and comments `{{! …}}`. Partials render nothing; a change of
/// delimiters is refused. Bounded: sections nest at most `maxDepth` deep, the output is at most
/// `maxOutput` characters, and a fill takes at most `maxSteps` steps (a tag or text visited, in
/// each pass of each section: sections that nest over lists multiply — 15 sections of 10 items
/// each are 10¹⁵ passes that print nothing, which the fuzzer found).
enum VBMLTemplate {
    static let maxDepth = 16
    static let maxOutput = 16_384
    static let maxSteps = 100_000

    indirect enum Node {
        case text(String)
        case value(name: String, escaped: Bool)
        case section(name: String, inverted: Bool, body: [Node])
    }

    static func fill(_ template: String, props: [String: VBMLValue], component: String) throws(VBMLDocument.Problem) -> String {
        guard template.count <= maxOutput else {
            throw VBMLDocument.Problem("\(component).template: longer than \(maxOutput) characters")
        }
        guard template.contains("{{") else { return template }
        let nodes = try parse(template, component: component)
        var out = ""
        var count = 0, steps = 0
        try render(nodes, stack: [.object(props)], into: &out, count: &count, steps: &steps, component: component)
        return out
    }

    static func parse(_ template: String, component: String) throws(VBMLDocument.Problem) -> [Node] {
        // Each open section: its name, whether inverted, and the nodes gathered so far.
        var open: [(name: String, inverted: Bool, nodes: [Node])] = [("", false, [])]
        var rest = Substring(template)
        func add(_ node: Node) { open[open.count - 1].nodes.append(node) }
        while let start = rest.range(of: "{{") {
            if start.lowerBound > rest.startIndex { add(.text(String(rest[..<start.lowerBound]))) }
            rest = rest[start.upperBound...]
            let triple = rest.first == "{"
            guard let end = rest.range(of: triple ? "}}}" : "}}") else {
                throw VBMLDocument.Problem("\(component).template: a tag {{ is not closed with }}")
            }
            var tag = rest[rest.index(rest.startIndex, offsetBy: triple ? 1 : 0)..<end.lowerBound]
            rest = rest[end.upperBound...]
            if triple { add(.value(name: tag.trimmingSpaces, escaped: false)); continue }
            let sigil = tag.first
            if let s = sigil, "#^/!&>=".contains(s) { tag = tag.dropFirst() }
            let name = tag.trimmingSpaces
            switch sigil {
            case "!", ">": continue
            case "=": throw VBMLDocument.Problem("\(component).template: changing Mustache's delimiters is not supported")
            case "&": add(.value(name: name, escaped: false))
            case "#", "^":
                guard open.count <= maxDepth else {
                    throw VBMLDocument.Problem("\(component).template: sections nest deeper than \(maxDepth)")
                }
                open.append((name, sigil == "^", []))
            case "/":
                guard open.count > 1, open[open.count - 1].name == name else {
                    throw VBMLDocument.Problem("\(component).template: {{/\(name.prefix(40))}} closes no open section")
                }
                let done = open.removeLast()
                add(.section(name: done.name, inverted: done.inverted, body: done.nodes))
            default: add(.value(name: name, escaped: true))
            }
        }
        if !rest.isEmpty { add(.text(String(rest))) }
        guard open.count == 1 else {
            throw VBMLDocument.Problem("\(component).template: section {{#\(open[open.count - 1].name.prefix(40))}} is not closed")
        }
        return open[0].nodes
    }

    static func lookup(_ name: String, in stack: [VBMLValue]) -> VBMLValue? {
        if name == "." { return stack.last }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for context in stack.reversed() {
            guard case .object(let fields) = context, var value = fields[parts[0]] else { continue }
            for part in parts.dropFirst() {
                guard case .object(let inner) = value, let next = inner[part] else { return nil }
                value = next
            }
            return value
        }
        return nil
    }

    static func render(_ nodes: [Node], stack: [VBMLValue], into out: inout String, count: inout Int, steps: inout Int,
                       component: String) throws(VBMLDocument.Problem) {
        steps += 1 + nodes.count
        guard steps <= maxSteps else {
            throw VBMLDocument.Problem("\(component).template: with its props it takes more than \(maxSteps) steps (sections over lists nested too deep)")
        }
        func emit(_ text: String) throws(VBMLDocument.Problem) {
            count += text.unicodeScalars.count
            guard count <= maxOutput else {
                throw VBMLDocument.Problem("\(component).template: with its props it is longer than \(maxOutput) characters")
            }
            out += text
        }
        for node in nodes {
            switch node {
            case .text(let text): try emit(text)
            case .value(let name, let escaped):
                let text = lookup(name, in: stack)?.text ?? ""
                try emit(escaped ? htmlEscaped(text) : text)
            case .section(let name, let inverted, let body):
                let value = lookup(name, in: stack)
                let truthy = value?.isTruthy ?? false
                if inverted {
                    if !truthy { try render(body, stack: stack, into: &out, count: &count, steps: &steps, component: component) }
                } else if truthy, let value {
                    if case .array(let items) = value {
                        for item in items { try render(body, stack: stack + [item], into: &out, count: &count, steps: &steps, component: component) }
                    } else {
                        try render(body, stack: stack + [value], into: &out, count: &count, steps: &steps, component: component)
                    }
                }
            }
        }
    }

    /// Mustache's HTML escaping of `{{name}}`.
    static func htmlEscaped(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "/": out += "&#x2F;"
            case "`": out += "&#x60;"
            case "=": out += "&#x3D;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

extension Substring {
    var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
