import Foundation
import FlapSerialTesting
import Testing
@testable import FlapSerial

@Suite struct ProtocolBytesTests {
    @Test func cobsHasNoZerosAndRoundTrips() {
        var g = SystemRandomNumberGenerator()
        for length in [0, 1, 2, 253, 254, 255, 256, 508, 1000] {
            for zeros in [0, 1, 3] {
                var data = (0..<length).map { _ in UInt8.random(in: 1...255, using: &g) }
                for _ in 0..<min(zeros, length) { data[Int.random(in: 0..<length, using: &g)] = 0 }
                let stuffed = COBS.encode(data)
                #expect(!stuffed.contains(0))
                #expect(stuffed.count <= data.count + data.count / 254 + 1)
                #expect(Independent.unstuff(stuffed) == data, "length \(length), zeros \(zeros)")
                #expect(COBS.decode(stuffed) == data)
            }
        }
        #expect(COBS.encode([0]) == [1, 1])
        #expect(COBS.encode([0x11, 0x22, 0, 0x33]) == [3, 0x11, 0x22, 2, 0x33])
        #expect(COBS.decode([3, 0x11, 0, 2]) == nil)
        #expect(COBS.decode([5, 1]) == nil)
    }

    @Test func crc32IsZlibs() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        let data: [UInt8] = (0..<300).map { UInt8($0 % 251) }
        #expect(CRC32.checksum(data) == Independent.crc32(data))
    }

    @Test func splitflapConfigCarriesEveryModulesTarget() throws {
        let stream = SplitflapProtocol.config(nonce: 300, modules: [.init(flap: 8), .init(flap: 0), .init(flap: 51, movementNonce: 2)])
        #expect(stream.last == 0 && stream.dropLast().allSatisfy { $0 != 0 })
        let frames = Independent.frames(stream)
        #expect(frames.count == 1)
        let body = try #require(Independent.body(frames[0]), "CRC")
        let top = Independent.fields(body)
        #expect(top.count == 2)
        #expect(top[0].0 == 1 && top[0].1 == 300)  // nonce
        #expect(top[1].0 == 3)                      // splitflap_config
        let modules = Independent.fields(try #require(top[1].2)).map { field -> [Int: UInt64] in
            #expect(field.0 == 1)
            return Dictionary(uniqueKeysWithValues: Independent.fields(field.2 ?? []).map { ($0.0, $0.1 ?? 0) })
        }
        #expect(modules.count == 3)
        #expect(modules[0][1] == 8 && modules[0][2] == nil)
        #expect(modules[1].isEmpty)  // flap 0: proto3 writes nothing, still one module
        #expect(modules[2][1] == 51 && modules[2][2] == 2)
        // request_state is an empty message under field 4.
        let request = try #require(Independent.body(Independent.frames(SplitflapProtocol.requestState(nonce: 7))[0]))
        #expect(Independent.fields(request).map(\.0) == [1, 4])
    }

    @Test func displayFramesRead() throws {
        // Written here by hand: FromSplitflap{ack{nonce 300}} and {splitflap_state{...}}.
        func frame(_ message: [UInt8]) -> [UInt8] {
            let c = Independent.crc32(message)
            let raw = message + [UInt8(c & 255), UInt8(c >> 8 & 255), UInt8(c >> 16 & 255), UInt8(c >> 24)]
            return COBS.encode(raw)
        }
        #expect(try SplitflapProtocol.decode(frame([0x1A, 0x03, 0x08, 0xAC, 0x02])) == .ack(nonce: 300))
        let module1: [UInt8] = [0x08, 0x02, 0x10, 0x05, 0x30, 0x03]       // SENSOR_ERROR, flap 5, missed 3
        let module2: [UInt8] = [0x10, 0x0C, 0x18, 0x01, 0x28, 0x01]       // flap 12, moving, unexpected 1
        let state: [UInt8] = [0x0A, UInt8(module1.count)] + module1 + [0x0A, UInt8(module2.count)] + module2 + [0x10, 0x01]
        let decoded = try SplitflapProtocol.decode(frame([0x0A, UInt8(state.count)] + state))
        guard case .state(let modules, let loopbacks) = decoded else { Issue.record("\(decoded)"); return }
        #expect(loopbacks)
        #expect(modules.map(\.state) == [.sensorError, .normal])
        #expect(modules.map(\.flap) == [5, 12] && modules.map(\.missedHome) == [3, 0] && modules.map(\.unexpectedHome) == [0, 1])
        #expect(modules[1].moving)
        var corrupt = frame([0x1A, 0x03, 0x08, 0xAC, 0x02])
        corrupt[2] ^= 0x40
        #expect(throws: SerialFrameError.crc) { try SplitflapProtocol.decode(corrupt) }
        #expect(throws: SerialFrameError.self) { try SplitflapProtocol.decode([0, 0]) }
    }

    @Test func flapbusMoveFrame() throws {
        let moves = [Flapbus.Move(module: 3, flap: 17, startMicros: 1_000_060_000, flipMs: 120),
                     Flapbus.Move(module: 300, flap: 0, startMicros: 0x0102_0304_0506_0708, flipMs: 200)]
        let frames = Independent.frames(Flapbus.move(nonce: 0xBEEF, moves))
        let body = try #require(Independent.body(frames[0]))
        #expect(Array(body[0..<4]) == [1, 0x10, 0xEF, 0xBE])  // version, MOVE, nonce LE
        #expect(body[4] == 2)
        func u(_ o: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(body[o + $1]) << (8 * UInt64($1)) } }
        #expect(u(5, 2) == 3 && body[7] == 17 && u(8, 8) == 1_000_060_000 && u(16, 2) == 120)
        #expect(u(18, 2) == 300 && body[20] == 0 && u(21, 8) == 0x0102_0304_0506_0708 && u(29, 2) == 200)
        #expect(body.count == 31)
    }

    @Test func flapbusRepliesRead() throws {
        func frame(_ type: UInt8, _ nonce: UInt16, _ payload: [UInt8]) -> [UInt8] {
            let body: [UInt8] = [1, type, UInt8(nonce & 255), UInt8(nonce >> 8)] + payload
            let c = Independent.crc32(body)
            return COBS.encode(body + [UInt8(c & 255), UInt8(c >> 8 & 255), UInt8(c >> 16 & 255), UInt8(c >> 24)])
        }
        #expect(try Flapbus.decode(frame(0x80, 9, [0])) == .ack(nonce: 9, result: .ok))
        #expect(try Flapbus.decode(frame(0x80, 9, [4])) == .ack(nonce: 9, result: .busy))
        #expect(try Flapbus.decode(frame(0x81, 1, [1, 132, 0, 0, 3, 0, 1, 2])) ==
                .info(nonce: 1, protocolVersion: 1, modules: 132, led: false, drum: [0, 1, 2]))
        #expect(try Flapbus.decode(frame(0x93, 2, [1, 0, 2, 7, 3, 0, 1, 0, 9, 0])) ==
                .status(nonce: 2, modules: [.init(state: 2, flap: 7, missedHome: 3, unexpectedHome: 1, crcErrors: 9)]))
        // With the `moving` bits appended: nine modules, the second and the ninth turning.
        let nine = (0..<9).flatMap { [0, UInt8($0), 0, 0, 0, 0, 0, 0] as [UInt8] }
        guard case .status(_, let modules) = try Flapbus.decode(frame(0x93, 3, [9, 0] + nine + [0b0000_0010, 0b0000_0001])) else {
            Issue.record("not a STATUS report"); return
        }
        #expect(modules.map(\.moving) == [false, true, false, false, false, false, false, false, true])
        #expect(modules.map(\.flap) == Array(0..<9))
        #expect(throws: SerialFrameError.self) { try Flapbus.decode(frame(0x10, 1, [])) }
        #expect(throws: SerialFrameError.self) { try Flapbus.decode(frame(0x81, 1, [1, 132, 0, 0, 9])) }
    }

    @Test func stationModuleBytes() {
        #expect(KroneFBM.setCode(address: 5, code: 17) == [0x98, 5, 17])
        #expect(KroneFBM.setCode(address: 200, code: 130) == [0xF8, 72, 2])
        #expect(KroneFBM.setAll() == [0x91])
        #expect(KroneFBM.command(.reset, address: 128) == [0xD3, 0])
        #expect(OmegaRS485.setPosition(address: 3, position: 17) == [0xFF, 0xC0, 3, 17])
        #expect(OmegaRS485.command(.readPosition, address: 9) == [0xFF, 0xD0, 9])
    }

    /// The example in hardware/flapbus.md is what the encoder writes.
    @Test func theSpecsExampleIsTrue() throws {
        let frame = Flapbus.move(nonce: 0xBEEF, [Flapbus.Move(module: 3, flap: 17, startMicros: 1_000_060_000, flipMs: 120)])
        let body = try #require(Independent.body(Independent.frames(frame)[0]))
        let hex = body.map { String(format: "%02X", $0) }.joined(separator: " ")
        #expect(hex == "01 10 EF BE 01 03 00 11 60 B4 9B 3B 00 00 00 00 78 00")
    }
}

@Suite struct IndependentCodecTests {
    /// The test-side stuffer agrees with the encoder on data of every shape.
    @Test func bothStuffersAgree() {
        for length in [0, 1, 253, 254, 255, 600] {
            let data: [UInt8] = (0..<length).map { (i: Int) -> UInt8 in i % 5 == 0 ? 0 : UInt8(i % 250 + 1) }
            let noZeros: [UInt8] = (0..<length).map { (i: Int) -> UInt8 in UInt8(i % 250 + 1) }
            for d in [data, noZeros] {
                #expect(Independent.stuff(d) == COBS.encode(d), "length \(length)")
                #expect(Independent.unstuff(Independent.stuff(d)) == d)
            }
        }
    }
}

/// Issue 18: what the fuzzer found in the decoders of what modules send back.
@Suite struct HostileRepliesTests {
    /// A length-delimited field whose length does not fit an Int trapped (a crash of flapd from
    /// one bad serial frame); now it is a malformed frame.
    @Test func aLengthPastIntIsMalformed() {
        let body: [UInt8] = [0x2A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x10, 0xE8]
        #expect(throws: SerialFrameError.self) { try SplitflapProtocol.decode(Array(SplitflapProtocol.frame(body).dropLast())) }
    }

    /// Varints past Int.max in a module's state are clamped, not trapped on.
    @Test func hugeVarintsAreClamped() throws {
        var module = ProtobufWriter()
        module.field(2, UInt64.max)
        var state = ProtobufWriter()
        state.field(1, message: module.bytes)
        var outer = ProtobufWriter()
        outer.field(1, message: state.bytes)
        let decoded = try SplitflapProtocol.decode(Array(SplitflapProtocol.frame(outer.bytes).dropLast()))
        guard case .state(let modules, _) = decoded else { Issue.record("\(decoded)"); return }
        #expect(modules.first?.flap == Int.max)
    }

    /// A frame of nothing but fixed-width fields is skipped in a loop (it recursed, one stack
    /// frame per field).
    @Test func manyFixedFieldsDoNotDeepenTheStack() throws {
        var reader = ProtobufReader(Array(repeating: [0x0D, 1, 2, 3, 4], count: 200_000).flatMap { $0 })
        #expect(try reader.next() == nil)
    }
}
