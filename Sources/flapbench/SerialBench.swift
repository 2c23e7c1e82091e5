import FlapCore
import FlapSerial
import FlapClock
import FlapTiming
import Foundation

/// Serial buses: what one full-board change costs on the wire for each protocol, the baud rate
/// that would carry it in time, and the CPU time to encode a frame.
enum SerialBench {
    static func run() {
        print("== serial buses: a full 6 × 22 change (every module moves), default cascade")
        let rows = 6, cols = 22, n = rows * cols
        let timing = FlipTiming()
        let flipMs = Double(timing.flip) / 1e6
        // Each module's start instant (ms), the cascade's.
        var starts: [(ms: Double, module: Int)] = []
        for r in 0..<rows { for c in 0..<cols { starts.append((Double(c) * 20 + Double(r) * 50, r * cols + c)) } }
        starts.sort { $0.ms < $1.ms }
        let instants = Array(Set(starts.map(\.ms))).sorted()
        let targets = (0..<n).map { SplitflapProtocol.ModuleTarget(flap: UInt8($0 % 52)) }

        // splitflap: every frame carries every module; one per distinct start instant.
        let frameBytes = SplitflapProtocol.config(nonce: 1000, modules: targets).count
        let gaps = zip(instants, instants.dropFirst()).map { $1 - $0 }
        let minGap = gaps.min() ?? flipMs
        row("splitflap: frame (132 modules)", "\(frameBytes) bytes; \(instants.count) start instants → \(frameBytes * instants.count) bytes if each gets its frame")
        row("  baud to send a frame per instant", String(format: "%.0f (the display's is 230 400: frames coalesce, one in flight)", Double(frameBytes * 10) / (minGap / 1000)))
        row("  baud for one frame within a flip", String(format: "%.0f", Double(frameBytes * 10) / (flipMs / 1000)))

        // flapbus: every module's MOVE up front (the controllers keep time), one frame of ≤ 255 moves.
        let moves = starts.map { Flapbus.Move(module: UInt16($0.module), flap: UInt8($0.module % 52), startMicros: UInt64($0.ms * 1000), flipMs: 120) }
        let flapbusBytes = Flapbus.sync(nonce: 1, hostMicros: 0).count + Flapbus.move(nonce: 2, moves).count
        row("flapbus: SYNC + MOVE (132 modules)", "\(flapbusBytes) bytes, sent once at the plan")
        row("  baud to deliver it within a flip", String(format: "%.0f", Double(flapbusBytes * 10) / (flipMs / 1000)))

        // Krone FBM, as StationDriver sends it: at each cascade instant SET_CODE for the modules
        // due, then SET_ALL; 8E1 = 11 bits a byte at 4800 baud.
        let kroneBytes = (0..<n).reduce(0) { $0 + KroneFBM.setCode(address: UInt8($1), code: 5).count } + instants.count * KroneFBM.setAll().count
        row("Krone FBM: 132 SET_CODE, SET_ALL/instant", String(format: "%d bytes; %.2f s at its 4800 baud; %.0f baud to fit the cascade",
                                                                       kroneBytes, Double(kroneBytes * 11) / 4800, Double(kroneBytes * 11) / (Double(starts.map(\.ms).max()!) / 1000 + flipMs / 1000)))
        // Omega: SET_POSITION each module, each after a 50 ms break.
        let omegaBytes = (0..<n).reduce(0) { $0 + OmegaRS485.setPosition(address: UInt8($1), position: 5).count }
        let omegaSeconds = Double(n) * (Double(OmegaRS485.breakMilliseconds) / 1000) + Double(omegaBytes * 10) / 19_200
        row("Omega RS-485: SET_POSITION × 132", String(format: "%d bytes + 132 breaks of 50 ms: %.2f s at 19 200 baud (the breaks dominate)", omegaBytes, omegaSeconds))

        // Encode time per frame.
        func time(_ label: String, _ iterations: Int, _ body: () -> Int) {
            var sink = 0
            let start = MonotonicClock.now()
            for _ in 0..<iterations { sink &+= body() }
            let ns = Double(MonotonicClock.now() - start) / Double(iterations)
            row(label, (ns < 1000 ? String(format: "%.0f ns", ns) : String(format: "%.1f µs", ns / 1000)) + (sink == 42 ? " " : ""))
        }
        time("encode: splitflap config, 132 modules", 2000) { SplitflapProtocol.config(nonce: 7, modules: targets).count }
        time("encode: flapbus MOVE, 132 modules", 2000) { Flapbus.move(nonce: 7, moves).count }
        time("encode: Krone SET_CODE", 200_000) { KroneFBM.setCode(address: 17, code: 9).count }
    }
}
