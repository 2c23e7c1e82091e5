import ArgumentParser
import FlapDaemon
import Foundation

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Post a text message to a board's local API.")

    @Argument(help: "The message; {NN} is a raw Vestaboard code (e.g. {63} a red chip).")
    var text: String
    @OptionGroup var api: LocalAPIOptions

    func run() async throws {
        let body = try JSONSerialization.data(withJSONObject: ["text": text])
        let answer = try api.request("POST", "/local-api/message", body: body)
        let status = answer.status
        print("sent (\(status))")
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print how a running flapd is: what each board shows, module health, conductor lateness, sound, uptime.")

    @OptionGroup var api: LocalAPIOptions

    func run() throws {
        print(try api.request("GET", "/status").body)
    }
}

/// Where a running flapd's local API is, and its key.
struct LocalAPIOptions: ParsableArguments {
    @Option(help: "The local API's base URL (default: from --config, else http://127.0.0.1:7000).")
    var url: String?
    @Option(help: "The API key (default: from --config or FLAPD_LOCAL_API_KEY).")
    var key: String?
    @Option(name: .shortAndLong, help: "Read the local API's address and key from this config file.")
    var config: String?

    /// One request; exit 1 with the reason when it fails.
    func request(_ method: String, _ path: String, body: Data = Data()) throws -> LocalAPIClient.Answer {
        let api = try loadConfig(config).localAPI
        let host = api.bind == "0.0.0.0" || api.bind == "::" ? "127.0.0.1" : api.bind
        let base = url ?? "http://\(host):\(api.port)"
        guard let endpoint = URLComponents(string: base), endpoint.scheme == "http", let target = endpoint.host else {
            throw fail("--url: '\(base)' is not an http:// URL")
        }
        let answer: LocalAPIClient.Answer
        do {
            answer = try LocalAPIClient.request(method, host: target, port: endpoint.port ?? 80, path: path, body: body, key: key ?? api.key)
        } catch {
            throw fail("cannot reach \(base): \(error)")
        }
        guard (200..<300).contains(answer.status) else { throw fail("\(base) answered \(answer.status): \(answer.body)") }
        return answer
    }
}

/// Writes a line to stderr.
enum FileHandleOutput {
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
