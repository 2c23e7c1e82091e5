import ArgumentParser
import FlapDaemon
import Foundation

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Post a text message to a board's local API.")

    @Argument(help: "The message; {NN} is a raw Vestaboard code (e.g. {63} a red chip).")
    var text: String
    @Option(help: "The local API's base URL (default: from --config, else http://127.0.0.1:7000).")
    var url: String?
    @Option(help: "The API key (default: from --config or FLAPD_LOCAL_API_KEY).")
    var key: String?
    @Option(name: .shortAndLong, help: "Read the local API's address and key from this config file.")
    var config: String?

    func run() async throws {
        let api = try loadConfig(config).localAPI
        let host = api.bind == "0.0.0.0" || api.bind == "::" ? "127.0.0.1" : api.bind
        let base = url ?? "http://\(host):\(api.port)"
        guard let endpoint = URLComponents(string: base), endpoint.scheme == "http", let target = endpoint.host else {
            throw fail("--url: '\(base)' is not an http:// URL")
        }
        let body = try JSONSerialization.data(withJSONObject: ["text": text])
        let answer: LocalAPIClient.Answer
        do {
            answer = try LocalAPIClient.post(host: target, port: endpoint.port ?? 80, path: "/local-api/message",
                                             body: body, key: key ?? api.key)
        } catch {
            throw fail("cannot reach \(base): \(error)")
        }
        let status = answer.status
        guard (200..<300).contains(status) else { throw fail("\(base) answered \(status): \(answer.body)") }
        print("sent (\(status))")
    }
}

/// Writes a line to stderr.
enum FileHandleOutput {
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
