import FlapWiring
import FlapCore

extension MAX7219Chain {
    /// The registers set once at start: no BCD decoding, all eight rows scanned, brightness,
    /// out of shutdown, display test off.
    public var setup: [(register: UInt8, data: UInt8)] {
        [(0x09, 0x00), (0x0B, 0x07), (0x0A, intensity), (0x0C, 0x01), (0x0F, 0x00)]
    }

    /// Level vectors (DIN, CLK, CS) that give every device the same register setting.
    public func all(_ register: UInt8, _ data: UInt8) -> [[Bool]] {
        send(order.map { _ in UInt16(register) << 8 | UInt16(data) })
    }

    /// Level vectors that show each module's image (`images[module]`, eight rows): one latch a row.
    public func show(_ images: [[UInt8]]) -> [[Bool]] {
        (0..<8).flatMap { row in send(order.map { UInt16(row + 1) << 8 | UInt16(images[$0][row]) }) }
    }

    /// `words[p]` for chain position p: the farthest device's word goes first.
    func send(_ words: [UInt16]) -> [[Bool]] {
        var out: [[Bool]] = [[false, false, false]]  // CS low
        out.reserveCapacity(words.count * 32 + 2)
        for word in words.reversed() {
            for bit in (0..<16).reversed() {
                let b = word >> UInt16(bit) & 1 == 1
                out.append([b, false, false])
                out.append([b, true, false])
            }
        }
        out.append([false, false, true])  // CS rising: every device latches its word
        return out
    }
}

/// How an LED module draws a flip: its upper half folds down like a flap. Eight rows each.
public enum LEDFold {
    /// The image a quarter, half (the 90° instant, where the glyph changes), three quarters and
    /// all the way through a flip from `a` to `b` (`phase` 1…4).
    public static func frame(from a: [UInt8], to b: [UInt8], phase: Int) -> [UInt8] {
        switch phase {
        case 1: [b[0], b[1], a[1], a[3], a[4], a[5], a[6], a[7]]  // the top flap half fallen: the new top behind it
        case 2: Array(b[0..<4] + a[4..<8])                     // edge-on: new top, old bottom
        case 3: [b[0], b[1], b[2], b[3], b[4], b[6], a[6], a[7]]  // the flap, new bottom on its back, lands
        default: b
        }
    }
}
