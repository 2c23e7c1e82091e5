import EndToEndSupport
import Foundation
import Testing

/// The fuzzers' seed corpus (and every input a fuzzer once crashed on, kept there after its
/// fix) replayed through each target of the plain `flapfuzz` build: none may crash.
@Suite struct FuzzCorpusTests {
    static let corpus = QEMUGuest.repository.appendingPathComponent("Tests/Fuzz/corpus").path

    @Test(arguments: (try? FileManager.default.contentsOfDirectory(atPath: corpus))?.sorted() ?? [])
    func everyCorpusInputReturns(target: String) async throws {
        let folder = Self.corpus + "/" + target
        let expected = try FileManager.default.contentsOfDirectory(atPath: folder).count
        let executable = URL(fileURLWithPath: FlapdProcess.executable).deletingLastPathComponent().appendingPathComponent("flapfuzz").path
        let run = try FlapdProcess([target, folder], executable: executable)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\(expected) inputs replayed"), "\(run.stdout)")
        #expect(expected > 0)
    }

    @Test func thereIsACorpusForEveryTarget() throws {
        let targets = try String(contentsOf: QEMUGuest.repository.appendingPathComponent("Sources/flapfuzz/FuzzTargets.swift"), encoding: .utf8)
            .matches(of: /^        "([a-z-]+)": \{/.anchorsMatchLineEndings()).map { String($0.1) }
        #expect(targets.count == 21)
        #expect(Set(targets) == Set(try FileManager.default.contentsOfDirectory(atPath: Self.corpus)))
    }
}
