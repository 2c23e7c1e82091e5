@testable import FlapBoard
import Foundation
import Testing
@testable import FlapDaemon

/// `flapd status` reads whatever answers on the port: checked as strict JSON within limits
/// before a decoder sees it (a nesting of 513 crashed Foundation's decoder, issue 18's finding 1).
@Suite struct StatusDecodeTests {
    @Test func anAnswerNestedPastTheLimitIsRefusedByName() {
        let deep = Data((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8)
        #expect { try StatusReport.decode(deep) } throws: { "\($0)".contains("nested deeper than 8 levels") }
        #expect(throws: (any Error).self) { try StatusReport.decode(Data(#"{"boards": []}"#.utf8)) }
    }
}

/// `flapd selftest` reads its report the same way (it called Foundation's decoder unchecked).
@Suite struct SelfTestDecodeTests {
    @Test func aReportNestedPastTheLimitIsRefusedAndAReportReadsBack() throws {
        let deep = Data(String(repeating: "[", count: 513).utf8)
        #expect { try SelfTestReport.decode(deep) } throws: { "\($0)".contains("nested deeper than 8 levels") }
        let report = SelfTestReport(running: false, modules: [
            SelfTestModule(board: "wall", row: 0, col: 1, seconds: 2.5, plannedSeconds: 2.4, magnetError: 1, verdict: "slipping"),
        ], lateSeconds: 0.1)
        #expect(try SelfTestReport.decode(JSONEncoder().encode(report)) == report)
    }
}
