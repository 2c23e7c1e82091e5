@testable import FlapHub
import FlapHubInput
import Testing

/// A row the schema promises text or a number in, but a database changed by hand answers with a
/// NULL, another type or fewer columns: an error that names the column, never a crash.
@Suite struct SQLRowTests {
    @Test func aColumnNotWhatTheSchemaPromisesIsAnErrorNamingIt() throws {
        let row: [SQLValue] = [.text("m1"), .null, .int(7), .double(1.5)]
        #expect(try row.text(0) == "m1")
        #expect(try row.double(2) == 7 && row.double(3) == 1.5)
        for (column, read) in [(2, { try row.text(1) }), (3, { try row.text(2) }), (5, { try row.text(4) })] as [(Int, () throws -> String)] {
            do { _ = try read(); Issue.record("column \(column) was taken") } catch let error as HubError {
                #expect(error.status == 500 && error.description.contains("column \(column) is not text"), "\(error)")
            }
        }
        #expect(throws: HubError.self) { try row.double(1) }
    }
}
