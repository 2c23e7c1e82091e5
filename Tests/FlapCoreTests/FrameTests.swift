import Testing
@testable import FlapCore

@Suite struct FrameTests {
    @Test func codesRoundTrip() throws {
        let codes = [[0, 1, 63], [36, 62, 71]]
        let f = try Frame(codes: codes, rows: 2, cols: 3)
        #expect(f.codes == codes)
        #expect(f[1, 1].text == "°")
    }

    @Test func badCodesAreNamed() {
        #expect(throws: FrameError.wrongRowCount(1, expected: 2)) { try Frame(codes: [[0]], rows: 2, cols: 1) }
        #expect(throws: FrameError.wrongColumnCount(row: 1, 2, expected: 1)) { try Frame(codes: [[0], [0, 0]], rows: 2, cols: 1) }
        #expect(throws: FrameError.unknownCode(43, row: 0, col: 1)) { try Frame(codes: [[0, 43]], rows: 1, cols: 2) }
        #expect(FrameError.unknownCode(43, row: 0, col: 1).description == "unknown code 43 at row 0, column 1")
    }
}
