import FlapWiring
import FlapCore
import FlapClock
import FlapTiming
import Foundation
import Testing
import TestWaits
@testable import FlapGPIO

/// MAX7219 chains read back by a model of the chip written here from its datasheet: a 16-bit
/// shift register a device, DIN clocked in on CLK's rising edge and passed on to the next
/// device, every device latching its register on CS's rising edge.
struct MAX7219Model {
    var shift: [UInt16]
    var registers: [[UInt8: UInt8]]
    var latches = 0
    private var last = [false, false, true]

    init(devices: Int) {
        shift = Array(repeating: 0, count: devices)
        registers = Array(repeating: [:], count: devices)
    }

    /// Levels (DIN, CLK, CS) in order.
    mutating func take(_ levels: [[Bool]]) {
        for l in levels {
            if l[1] && !last[1] && !l[2] {  // clock rising while selected: device 0 nearest the Pi
                var carry = l[0]
                for d in shift.indices {
                    let out = shift[d] & 0x8000 != 0
                    shift[d] = shift[d] << 1 | (carry ? 1 : 0)
                    carry = out
                }
            }
            if l[2] && !last[2] {
                for d in shift.indices { registers[d][UInt8(shift[d] >> 8)] = UInt8(shift[d] & 0xFF) }
                latches += 1
            }
            last = l
        }
    }

    func rows(_ device: Int) -> [UInt8] { (1...8).map { registers[device][UInt8($0)] ?? 0 } }
}

@Suite struct MAX7219Tests {
    @Test func everyDeviceGetsItsWordAndTheChainOrderHolds() async {
        let chain = MAX7219Chain(din: 4, clk: 5, cs: 6, order: [2, 0, 1], intensity: 9)
        var model = MAX7219Model(devices: 3)
        for s in chain.setup { model.take(chain.all(s.register, s.data)) }
        #expect(model.registers.allSatisfy { $0 == [0x09: 0, 0x0B: 7, 0x0A: 9, 0x0C: 1, 0x0F: 0] })
        let images = [LEDFont.rows(Glyph(character: "H")!), LEDFont.rows(Glyph(character: "I")!), LEDFont.rows(.blank)]
        model.take(chain.show(images))
        // Position 0 (nearest the Pi) drives module 2, then modules 0 and 1.
        #expect(model.rows(0) == images[2] && model.rows(1) == images[0] && model.rows(2) == images[1])
        #expect(model.latches == 5 + 8)
    }

    @Test func theFontDrawsAFiveBySevenFaceAndChipsAsPatterns() async {
        // "H" by hand: columns 1 and 5 (bits 6 and 2), the bar across row 3.
        #expect(LEDFont.rows(Glyph(character: "H")!) == [0x44, 0x44, 0x44, 0x7C, 0x44, 0x44, 0x44, 0])
        #expect(LEDFont.rows(.blank) == Array(repeating: 0, count: 8))
        let chips = (63...71).map { LEDFont.rows(Glyph(code: $0)!) }
        #expect(Set(chips.dropLast()).count == 8, "the eight colours differ")
        #expect(Glyph.all.filter { $0.chip == nil && $0 != .blank }.allSatisfy { LEDFont.rows($0).contains { $0 != 0 } }, "every character is drawn")
    }

    @Test func aFlipFoldsTheUpperHalfDownAndChangesAtNinetyDegrees() async {
        let a = (0..<8).map { UInt8($0) }, b = (0..<8).map { UInt8(0xF0 + $0) }
        #expect(LEDFold.frame(from: a, to: b, phase: 2) == [0xF0, 0xF1, 0xF2, 0xF3, 4, 5, 6, 7])
        #expect(LEDFold.frame(from: a, to: b, phase: 4) == b)
        #expect(Array(LEDFold.frame(from: a, to: b, phase: 1)[4...]) == [4, 5, 6, 7], "before 90°: the old bottom")
        #expect(Array(LEDFold.frame(from: a, to: b, phase: 3)[..<4]) == Array(b[..<4]), "after 90°: the new top")
    }

    @Test func theDriverDrawsEveryFlipAndEndsOnTheTarget() async throws {
        let sink = RecordingOutputs()
        let chain = MAX7219Chain(din: 0, clk: 1, cs: 2, order: [0, 1])
        let driver = LEDMatrixDriver(board: 0, rows: 1, cols: 2, chain: chain, outputs: sink)
        driver.start(glyphs: [.blank, .blank])
        defer { driver.stop() }
        let plan = Planner.plan(from: Frame(rows: 1, cols: 2), to: try Frame(codes: [[2, 0]], rows: 1, cols: 2), drum: .standard,
                                timing: FlipTiming(flipMs: 100, columnStaggerMs: 0, rowStaggerMs: 0), motion: .forward)!
        driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now())
        _ = await eventually { driver.idle }
        var model = MAX7219Model(devices: 2)
        model.take(sink.recorded)
        #expect(model.rows(0) == LEDFont.rows(Glyph(character: "B")!) && model.rows(1) == LEDFont.rows(.blank))
        #expect(driver.frames >= 2 && driver.frames <= 8, "two flips of four frames each, late ones merged")
    }

    /// A stop mid-transition: the flip in progress is drawn to its end, and what the driver says
    /// each module shows — what the daemon saves — is the glyph of the chain's last frame.
    @Test func aStopEndsOnTheGlyphTheDriverReports() async throws {
        let sink = RecordingOutputs()
        let chain = MAX7219Chain(din: 0, clk: 1, cs: 2, order: [0, 1])
        let driver = LEDMatrixDriver(board: 0, rows: 1, cols: 2, chain: chain, outputs: sink)
        driver.start(glyphs: [.blank, .blank])
        #expect(driver.flaps == [nil, nil], "no plan has moved a module")
        let plan = Planner.plan(from: Frame(rows: 1, cols: 2), to: try Frame(codes: [[26, 0]], rows: 1, cols: 2), drum: .standard,
                                timing: FlipTiming(flipMs: 200, columnStaggerMs: 0, rowStaggerMs: 0), motion: .forward)!
        driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now())
        _ = await eventually { driver.frames >= 3 }
        driver.finish(board: 0, at: MonotonicClock.now())
        driver.stop()
        let flap = try #require(driver.flaps[0])
        #expect(driver.flaps[1] == nil)
        var model = MAX7219Model(devices: 2)
        model.take(sink.recorded)
        #expect(model.rows(0) == LEDFont.rows(Drum.standard.glyphs[flap]), "the last frame draws flap \(flap)")
    }

    /// Stress series (run 1 and 2 of the load series, GPIOStopHILTests): a stop whose drain ran
    /// out before the flip in progress had been drawn to its end left the chain on a fold frame
    /// — upper half of the new glyph, lower half of the old — while the saved state said the new
    /// glyph. With no time to drain at all, the last frame must still draw the saved glyph.
    @Test func aStopWithNoTimeToDrainStillEndsOnTheReportedGlyph() async throws {
        let sink = RecordingOutputs()
        let chain = MAX7219Chain(din: 0, clk: 1, cs: 2, order: [0, 1])
        let driver = LEDMatrixDriver(board: 0, rows: 1, cols: 2, chain: chain, outputs: sink)
        driver.start(glyphs: [.blank, .blank])
        let plan = Planner.plan(from: Frame(rows: 1, cols: 2), to: try Frame(codes: [[26, 0]], rows: 1, cols: 2), drum: .standard,
                                timing: FlipTiming(flipMs: 2000, columnStaggerMs: 0, rowStaggerMs: 0), motion: .forward)!
        driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now() - 600_000_000)
        // 0.6 s into a 2 s flip: its first fold frame (at 0.5 s) is due at once, its end is not.
        _ = await eventually { driver.frames >= 1 }
        driver.finish(board: 0, at: MonotonicClock.now())
        driver.stop(drainSeconds: 0)
        let flap = try #require(driver.flaps[0])
        var model = MAX7219Model(devices: 2)
        model.take(sink.recorded)
        #expect(model.rows(0) == LEDFont.rows(Drum.standard.glyphs[flap]), "the last frame draws flap \(flap)")
    }
}
