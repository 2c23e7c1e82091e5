import EndToEndSupport
import Foundation
import Testing

/// Issue 38, item 2: each server's OpenAPI 3.1 contract (`openapi/flapd.yaml`,
/// `openapi/flaphub.yaml`) is a valid document (`openapi-spec-validator` from PyPI), and a
/// property-based run of `schemathesis` (PyPI) against the real server — requests generated
/// from the document, positive and negative, one after another and in stateful sequences —
/// finds no 5xx, no status or content type the contract does not name, no response that breaks
/// its schema, and no hang (each request within 10 s); the server answers after it.
@Suite struct ContractTests {
    static let documents = ["flapd.yaml", "flaphub.yaml"].map { QEMUGuest.repository.path + "/openapi/" + $0 }
    /// What the run checks; the seed is fixed so a failure in CI is the same here
    /// (`FLAP_CONTRACT_SEED` explores others).
    static let checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    static var seed: String { ProcessInfo.processInfo.environment["FLAP_CONTRACT_SEED"] ?? "38" }

    /// The contract venv's bin folder.
    func tools() async throws -> String {
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv", "contract"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the contract venv: \(venv.stderr)")
        return URL(fileURLWithPath: venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).deletingLastPathComponent().path
    }

    func schemathesis(_ bin: String, _ document: String, url: String, headers: [String] = [], exclude: [String] = []) async throws -> (status: Int32, stdout: String, stderr: String) {
        // In a scratch folder: schemathesis keeps its cache (.schemathesis/) where it runs.
        let dir = try scratchDirectory("flap-schemathesis")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try FlapdProcess(["-c", #"cd "$0" && exec "$@""#, dir, bin + "/schemathesis",
                                    "run", document, "--url", url, "--checks", Self.checks, "--max-examples", "40",
                                    "--request-timeout", "10", "--seed", Self.seed, "--no-color"]
                                   + headers.flatMap { ["-H", $0] } + exclude.flatMap { ["--exclude-path", $0] },
                                   executable: "/bin/sh")
        let status = await run.waitForSlowExit()
        // Figures for the log: how many requests were generated, and how they fared.
        let summary = run.stdout.split(separator: "\n").drop { !$0.contains("Test cases:") }.dropFirst().first ?? "?"
        print("contract \(URL(fileURLWithPath: document).lastPathComponent): \(summary.trimmingCharacters(in: .whitespaces)) (seed \(Self.seed))")
        return (status, run.stdout, run.stderr)
    }

    /// The summary's count of test cases: "N generated, N passed", nothing failed or errored.
    static func allPassed(_ output: String) -> Bool {
        guard let line = output.split(separator: "\n").drop(while: { !$0.contains("Test cases:") }).dropFirst().first,
              let m = line.firstMatch(of: /(\d+) generated, (\d+) passed$/) else { return false }
        return m.1 == m.2 && Int(m.1)! > 0
    }

    @Test(.timeLimit(.minutes(5))) func theDocumentsAreValidOpenAPI() async throws {
        let bin = try await tools()
        let check = try FlapdProcess(Self.documents, executable: bin + "/openapi-spec-validator")
        #expect(await check.waitForSlowExit() == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.components(separatedBy: ": OK").count - 1 == 2, "\(check.stdout)")
        #expect(Self.documents.allSatisfy { (try? String(contentsOfFile: $0, encoding: .utf8))?.hasPrefix("openapi: 3.1.") == true })
    }

    @Test(.timeLimit(.minutes(30))) func flapdKeepsItsContract() async throws {
        let bin = try await tools()
        let dir = try scratchDirectory("flap-contract")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "local_api: { port: 0, key: contract-key, enablement_token: open }\nsound: { enabled: false }\n"
            .write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/c.yaml", "--plain", "--no-sound", "--state-dir", dir])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // The live board's stream never ends: it is not a request a run can wait for.
        let run = try await schemathesis(bin, Self.documents[0], url: "http://127.0.0.1:\(port)",
                                         headers: ["X-Vestaboard-Local-Api-Key: contract-key"], exclude: ["/events"])
        #expect(run.status == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))")
        #expect(Self.allPassed(run.stdout), "\(run.stdout.suffix(3000))")
        #expect(try await http("GET", port: port, path: "/status", key: "contract-key").status == 200, "flapd answers after the run")
    }

    @Test(.timeLimit(.minutes(30))) func flaphubKeepsItsContract() async throws {
        let bin = try await tools()
        let hub = try await HubHarness()
        try await hub.users(["alice", "board", "bob"], friends: [("alice", "board"), ("alice", "bob")])
        try await hub.start()
        let cloud = try await hub.admin(["token", "add", "board"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let run = try await schemathesis(bin, Self.documents[1], url: hub.url,
                                         headers: ["Authorization: Bearer \(hub.tokens["alice"]!)", "X-Vestaboard-Token: \(cloud)"])
        #expect(run.status == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))")
        #expect(Self.allPassed(run.stdout), "\(run.stdout.suffix(3000))")
        #expect(try await hub.request("GET", "/api/v1/users/me", as: "alice").status == 200, "flaphub answers after the run")
    }
}
