import FlapWiring
import ArgumentParser
import FlapSerial
import Foundation

/// `flapserial`: opens a serial port as flapd does (libserialport) and drives an open splitflap
/// display to the given flaps — to check wiring and settings, and the serial hardware-in-the-loop
/// test's guest program.
@main
struct FlapSerialProbe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flapserial",
        abstract: "Drive an open splitflap display over a serial port to the given flaps and report what it says.")

    @Option(help: "Serial port (e.g. /dev/ttyUSB0).") var port: String
    @Option(help: "Baud rate.") var baud = SplitflapProtocol.baud
    @Option(help: "Parity: none, even, odd.") var parity = "none"
    @Option(help: "Stop bits: 1 or 2.") var stopBits = 1
    @Option(help: "Flow control: none, rtscts, xonxoff.") var flowControl = "none"
    @Option(help: "Each module's target flap, comma-separated.") var targets: String
    @Option(help: "Milliseconds before a frame without an answer is sent again.") var retryMs = SplitflapProtocol.retryMilliseconds
    @Option(help: "Seconds to wait for the display's acknowledgement.") var timeout: Double = 30

    func run() throws {
        guard let p = SerialPortTransport.Settings.Parity(rawValue: parity) else { throw ValidationError("--parity: '\(parity)' is not none, even or odd") }
        guard let f = SerialPortTransport.Settings.FlowControl(rawValue: flowControl) else {
            throw ValidationError("--flow-control: '\(flowControl)' is not none, rtscts or xonxoff")
        }
        let flaps = targets.split(separator: ",").map { UInt8($0.trimmingCharacters(in: .whitespaces)) }
        guard !flaps.isEmpty, flaps.allSatisfy({ $0 != nil }) else { throw ValidationError("--targets: '\(targets)' is not a list of flaps 0…255") }
        let transport: SerialPortTransport
        do { transport = try SerialPortTransport(name: port, settings: .init(baud: baud, parity: p, stopBits: stopBits, flowControl: f)) } catch {
            FileHandle.standardError.write(Data("flapserial: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let link = SplitflapLink(transport: transport, retryMs: retryMs) { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        let wanted = flaps.map { SplitflapProtocol.ModuleTarget(flap: $0!) }
        link.start()
        link.set(wanted)
        let acknowledged = link.waitUntilAcknowledged(wanted, timeout: timeout)
        link.stop()
        let c = link.counters
        let report = ProbeReport(
            port: port, baud: baud, acknowledged: acknowledged, sent: c.sent, retries: c.retries, acks: c.acks,
            crcErrors: c.crcErrors, malformed: c.malformed, stateReports: c.stateReports,
            modules: c.modules.map { .init(state: "\($0.state)", flap: $0.flap, missedHome: $0.missedHome, unexpectedHome: $0.unexpectedHome) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print("FLAPSERIAL " + String(decoding: try encoder.encode(report), as: UTF8.self))
        if !acknowledged { throw ExitCode(1) }
    }
}

/// What `flapserial probe` prints after `FLAPSERIAL ` on its last line: the link's counters and
/// the display's last report of its modules.
struct ProbeReport: Encodable {
    let port: String
    let baud: Int
    let acknowledged: Bool
    let sent, retries, acks, crcErrors, malformed, stateReports: Int
    let modules: [Module]

    struct Module: Encodable {
        let state: String
        let flap, missedHome, unexpectedHome: Int
        enum CodingKeys: String, CodingKey { case state, flap, missedHome = "missed_home", unexpectedHome = "unexpected_home" }
    }

    enum CodingKeys: String, CodingKey {
        case port, baud, acknowledged, sent, retries, acks, malformed, modules
        case crcErrors = "crc_errors", stateReports = "state_reports"
    }
}
