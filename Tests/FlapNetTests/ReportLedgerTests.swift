import Testing
@testable import FlapNet

/// A report is confirmed only by the pong to a ping that may not be ahead of it on the wire.
@Suite struct ReportLedgerTests {
    @Test func aPongConfirmsOnlyWhatWasWrittenBeforeItsPing() {
        let ledger = ReportLedger()
        ledger.pinging()           // the keepalive's ping, ahead of both reports
        ledger.wrote("a")
        ledger.wrote("b")
        ledger.ponged()            // its pong: a and b came after that ping
        #expect(ledger.unconfirmed == ["a", "b"])
        ledger.pinging()           // the reporter's ping after them
        ledger.wrote("c")          // written after that ping began
        ledger.ponged()
        #expect(ledger.unconfirmed == ["c"])
    }

    @Test func aPingBegunBeforeAReportReturnedIsTakenAsAheadOfIt() {
        let ledger = ReportLedger()
        ledger.pinging()           // began while "a" was being written: it may be ahead or behind
        ledger.wrote("a")
        ledger.ponged()            // may answer a ping ahead of "a": not enough
        #expect(ledger.unconfirmed == ["a"])
        ledger.pinging()
        ledger.ponged()
        #expect(ledger.unconfirmed.isEmpty)
    }

    @Test func withoutAPongEveryReportStays() {
        let ledger = ReportLedger()
        for id in ["x", "y", "z"] { ledger.wrote(id); ledger.pinging() }
        #expect(ledger.unconfirmed == ["x", "y", "z"])
    }
}
