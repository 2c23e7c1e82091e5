import Testing
@testable import FlapDoor

@Suite struct MaskCheckTests {
    func masked(_ payload: Int) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload < 126 { frame.append(0x80 | UInt8(payload)) }
        else if payload < 65536 { frame += [0x80 | 126, UInt8(payload >> 8), UInt8(payload & 0xFF)] }
        else { frame.append(0x80 | 127); frame += (0..<8).reversed().map { UInt8((payload >> ($0 * 8)) & 0xFF) } }
        return frame + [1, 2, 3, 4] + Array(repeating: 0x41, count: payload)
    }

    @Test func followsMaskedFramesOfEveryLengthForm() {
        var check = MaskCheck()
        for size in [0, 5, 125, 126, 300, 65_535, 65_536] {
            let ok = check.read(masked(size))
            #expect(ok, "\(size)")
        }
        // Bytes split anywhere read the same.
        var split = MaskCheck()
        let stream = masked(200) + masked(3)
        #expect(stream.allSatisfy { split.read([$0]) })
    }

    @Test func knowsWhenTheStreamIsBetweenMessages() {
        var check = MaskCheck()
        #expect(check.betweenMessages)
        let frame = masked(300)
        _ = check.read(frame.prefix(3))
        #expect(!check.betweenMessages)  // within a header
        _ = check.read(frame.dropFirst(3).dropLast())
        #expect(!check.betweenMessages)  // within a payload
        _ = check.read(frame.suffix(1))
        #expect(check.betweenMessages)
        // A text frame without FIN, a ping between its fragments, then its last frame.
        _ = check.read([0x01, 0x81, 1, 2, 3, 4, 0x41])
        #expect(!check.betweenMessages)
        _ = check.read([0x89, 0x80, 1, 2, 3, 4])
        #expect(!check.betweenMessages)
        _ = check.read([0x80, 0x81, 1, 2, 3, 4, 0x42])
        #expect(check.betweenMessages)
    }

    @Test func findsTheFirstUnmaskedFrame() {
        var check = MaskCheck()
        let first = check.read(masked(10)), second = check.read([0x81, 0x02, 0x68, 0x69])
        #expect(first && !second)
        var alone = MaskCheck()
        let ping = alone.read([0x89, 0x00])  // an unmasked ping
        #expect(!ping)
    }
}
