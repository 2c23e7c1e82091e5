import FlapWiring
import Dispatch
import FlapCore
import FlapClock
import FlapTiming
import Foundation
import Synchronization
import Testing
import TestWaits
@testable import FlapSound

/// Waits for a board to settle.
final class Settled: FlipObserver {
    let signal = DispatchSemaphore(value: 0)
    func flip(_ event: FlipEvent) {}
    func settled(board: Int, transition: Int, frame: Frame) { signal.signal() }
}

/// The samples of a WAV file written by ALSA's file plugin (16-bit mono).
func wavSamples(_ path: String) throws -> [Int16] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let bytes = [UInt8](data)
    guard let at = (0..<(bytes.count - 8)).first(where: { bytes[$0..<$0 + 4].elementsEqual("data".utf8) }) else { return [] }
    let body = bytes[(at + 8)...]
    return stride(from: body.startIndex, to: body.endIndex - 1, by: 2).map { Int16(bitPattern: UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8) }
}

/// Sample indices where sound starts after at least 5 ms of silence.
func onsets(_ s: [Int16]) -> [Int] {
    var result: [Int] = []
    var quiet = 240
    for (i, x) in s.enumerated() {
        if abs(Int(x)) > 300 {
            if quiet >= 240 { result.append(i) }
            quiet = 0
        } else if abs(Int(x)) < 30 {
            quiet += 1
        } else {
            quiet = 0
        }
    }
    return result
}

@Suite(.serialized) struct ALSACaptureTests {
    func capture(rows: Int, cols: Int, timing: FlipTiming, target: [UInt8]) async throws -> (samples: [Int16], transition: Conductor.Transition, player: ClackPlayer.Counters) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("clack-\(UUID().uuidString).wav").path
        var options = ClackPlayer.Options()
        options.device = "file:FILE=\(file),FORMAT=wav"
        let warnings = Mutex<[String]>([])
        let player = ClackPlayer(options: options) { w in warnings.withLock { $0.append(w) } }
        let settle = Settled()
        let conductor = Conductor(boards: [.init(rows: rows, cols: cols, drum: .standard, timing: timing, motion: .forward)],
                                  drivers: [settle], clackSinks: [player])
        _ = conductor.start()
        // Play once the device is open and streaming, so that no clack is due before it can sound.
        #expect(await offPool { player.waitUntilWritten(through: MonotonicClock.now()) })
        let t = conductor.play(board: 0, target: target, start: MonotonicClock.now() + 50_000_000)
        #expect(await offPool { settle.signal.wait(timeout: .now() + 60) == .success })
        conductor.stop()
        // The stream must hold the last clack whole (70 ms) before it is closed.
        let end = t.start + t.plan.duration + 100_000_000
        #expect(await offPool { player.waitUntilWritten(through: end) }, "\(warnings.withLock { $0 })")
        let counters = player.stats
        player.stop()
        defer { try? FileManager.default.removeItem(atPath: file) }
        return (try wavSamples(file), t, counters)
    }

    @Test func onsetsSitAtThePlannedInstants() async throws {
        // Two modules, 3 and 4 flips, 200 ms per flip, 100 ms apart: 7 clacks 100 ms apart.
        let timing = FlipTiming(flipMs: 200, columnStaggerMs: 100, rowStaggerMs: 0)
        let (samples, t, counters) = try await capture(rows: 1, cols: 2, timing: timing, target: [3, 4])
        let planned = t.plan.moves.flatMap { m in (0..<Int(m.flips)).map { m.clack($0, flip: timing.flip) } }.sorted()
        let found = onsets(samples)
        #expect(counters.clacks == t.plan.flipCount && counters.late == 0)
        #expect(found.count == t.plan.flipCount, "one onset per flip: \(found)")
        guard found.count == planned.count else { return }
        for (onset, instant) in zip(found, planned) {
            let heard = Double(onset - found[0]) / 48.0
            let plannedMs = Double(instant - planned[0]) / 1e6
            #expect(abs(heard - plannedMs) <= 1.0, "onset at \(heard) ms, planned \(plannedMs) ms")
        }
    }

    @Test func aFullBoardAtOnceNeverClips() async throws {
        let timing = FlipTiming(flipMs: 120, columnStaggerMs: 0, rowStaggerMs: 0)
        let (samples, t, counters) = try await capture(rows: 6, cols: 22, timing: timing, target: Array(repeating: 2, count: 132))
        #expect(t.plan.flipCount == 264)
        #expect(counters.clacks == 264)
        #expect(samples.count > 48_000 / 10)
        #expect(samples.contains { abs(Int($0)) > 16_000 }, "loud")
        #expect(!samples.contains { $0 == Int16.max || $0 == -Int16.max || $0 == Int16.min }, "never at full scale")
    }

    @Test func aMissingDeviceIsOneWarningAndSilence() async {
        var options = ClackPlayer.Options()
        options.device = "hw:97,0"
        options.retrySeconds = 0.2
        let warned = DispatchSemaphore(value: 0)
        let count = Mutex(0)
        let player = ClackPlayer(options: options) { _ in count.withLock { $0 += 1 }; warned.signal() }
        #expect(await offPool { warned.wait(timeout: .now() + 30) == .success })
        player.schedule(board: 0, clacks: [MonotonicClock.now()], since: 0)
        // Several retries fail; the warning stays one.
        _ = await eventually { player.stats.openFailures >= 3 }
        player.stop()
        #expect(count.withLock { $0 } == 1)
    }
}
