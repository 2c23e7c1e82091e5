import ArgumentParser
import FlapBoard
import FlapCore
import FlapDaemon
import FlapLocalAPI
import FlapMessages
import FlapNet
import Foundation

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Post a message to a board's local API: text, or a VBML document (--vbml).")

    @Argument(help: "The message; {NN} is a raw Vestaboard code (e.g. {63} a red chip).")
    var text: String?
    @Option(help: ArgumentHelp("Send this VBML document (JSON: {props, style, components}); the board renders it on its own size.",
                               valueName: "file"))
    var vbml: String?
    @Option(help: ArgumentHelp("A temporary message: shown this many seconds (10-43200), then what was there comes back.", valueName: "seconds"))
    var duration: Double?
    @OptionGroup var api: LocalAPIOptions

    func validate() throws {
        guard (text == nil) != (vbml == nil) else { throw ValidationError("give the message text, or --vbml FILE (one of them)") }
        if let duration, !InboxMessage.durationRange.contains(duration) {
            throw ValidationError("--duration: \(duration) s is outside 10 s – 12 h (10…43200)")
        }
    }

    func run() async throws {
        let body: Data
        if let vbml {
            guard let handle = FileHandle(forReadingAtPath: vbml) else { throw fail("--vbml: cannot read \(vbml)") }
            let bytes = try handle.read(upToCount: LocalAPI.maxBody + 1) ?? Data()
            guard bytes.count <= LocalAPI.maxBody else { throw fail("--vbml: \(vbml) is larger than \(LocalAPI.maxBody) bytes") }
            do throws(VBMLDocument.Problem) { _ = try VBMLDocument.decode(bytes) } catch {
                throw fail("--vbml: \(vbml): \(error.description)")
            }
            guard var object = try JSONSerialization.jsonObject(with: bytes) as? [String: Any] else { throw fail("--vbml: \(vbml) is not a JSON object") }
            if let duration { object["duration"] = duration }
            body = try JSONSerialization.data(withJSONObject: object)
        } else {
            body = SortedJSON.data(encoding: TextMessage(text: text ?? "", duration: duration))
        }
        let answer = try api.request("POST", "/local-api/message", body: body)
        let status = answer.status
        print("sent (\(status))")
    }
}

/// `POST /local-api/message`'s body for a text.
private struct TextMessage: Encodable {
    let text: String
    let duration: Double?
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print how a running flapd is: what each board shows, module health, conductor lateness, sound, uptime.")

    @OptionGroup var api: LocalAPIOptions

    func run() throws {
        let body = try api.request("GET", "/status").body
        // Read as the one status model the daemon writes, so a flapd that speaks another is named.
        let report: StatusReport
        do { report = try StatusReport.decode(Data(body.utf8)) } catch {
            throw fail("the answer of /status is not a flapd status: \(error)")
        }
        print(String(decoding: try report.json(), as: UTF8.self))
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

struct Home: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Home every module of the GPIO boards with home sensors (a running flapd's): each turns to its magnet, on by its calibrated offset, and on to the flap it should show.")

    @OptionGroup var api: LocalAPIOptions

    func run() throws {
        print(try api.request("POST", "/home").body)
    }
}
