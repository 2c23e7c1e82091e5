import FlapCore
import FlapWiring
import Testing
@testable import FlapSound

@Suite struct ClackSynthesisTests {
    let model = ClackModel()

    @Test func variantsAreShortBrightAndDifferent() {
        let variants = model.synthesize()
        #expect(variants.count == 16)
        for v in variants {
            let ms = Double(v.count) / 48
            #expect((50...100).contains(ms))
            #expect(v.allSatisfy { $0.isFinite })
            #expect(abs(v.map { abs($0) }.max()! - 0.5) < 1e-4, "every variant peaks at the model's peak")
            // The impact is at the start: the first 5 ms hold the loudest sample.
            let loudest = v.indices.max { abs(v[$0]) < abs(v[$1]) }!
            #expect(loudest < 240)
            #expect(v.last == 0, "faded to silence")
        }
        #expect(variants[0] != variants[1])
        #expect(model.synthesize() == variants, "deterministic for a seed")
    }
}

@Suite struct ClackMixerTests {
    let variants = ClackModel().synthesize()
    let ms: Int64 = 1_000_000

    func render(_ clacks: [ClackMixer.Clack], frames: Int) -> (out: [Float], mixer: ClackMixer) {
        var mixer = ClackMixer(variants: variants)
        mixer.volume = 1
        var pending = clacks.sorted { $0.instant < $1.instant }
        var all: [Float] = []
        var buffer: [Float] = []
        var t: Int64 = 0
        while all.count < frames {
            mixer.render(&buffer, frames: 240, time: t, rate: 48_000, pending: &pending)
            all += buffer[0..<240]
            t += 5 * ms
        }
        return (all, mixer)
    }

    @Test func aClackStartsAtTheSampleOfItsInstant() {
        let (out, mixer) = render([.init(instant: 10 * ms + 500_000, board: 0, gain: 1, variant: 3)], frames: 4800)
        let first = out.firstIndex { $0 != 0 }!
        // 10.5 ms at 48 kHz is sample 504; the variant's first sample may be near zero.
        #expect((504...506).contains(first))
        #expect(out[504 ..< 504 + variants[3].count].elementsEqual(variants[3]) { abs($0 - $1) < 1e-6 })
        #expect(mixer.started == 1 && mixer.late == 0)
    }

    @Test func aWholeBoardAtOnceDoesNotClip() {
        let clacks = (0..<132).map { i in ClackMixer.Clack(instant: 2 * ms, board: 0, gain: 1.1, variant: i % 16) }
        let (out, mixer) = render(clacks, frames: 9600)
        #expect(mixer.started == 132)
        #expect(out.allSatisfy { abs($0) < 1 })
        #expect(mixer.peak > 0.7, "loud, but limited")
    }

    @Test func voicesAreCapped() {
        // 100 clacks 0.1 ms apart: distinct start samples, more than the cap.
        let clacks = (0..<100).map { i in ClackMixer.Clack(instant: Int64(i) * 100_000, board: 0, gain: 1, variant: 0) }
        var mixer = ClackMixer(variants: variants)
        var pending = clacks
        var buffer: [Float] = []
        mixer.render(&buffer, frames: 480, time: 0, rate: 48_000, pending: &pending)
        #expect(mixer.started == 100)
        #expect(buffer.allSatisfy { abs($0) < 1 })
    }

    @Test func longOverdueClacksAreDroppedNotBurst() {
        var mixer = ClackMixer(variants: variants)
        var pending = [ClackMixer.Clack(instant: 0, board: 0, gain: 1, variant: 0)]
        var buffer: [Float] = []
        mixer.render(&buffer, frames: 240, time: 80 * ms, rate: 48_000, pending: &pending)
        #expect(mixer.dropped == 1 && mixer.started == 0 && pending.isEmpty)
        #expect(buffer.allSatisfy { $0 == 0 })
    }

    @Test func lateClacksStartAtOnceAndAreCounted() {
        var mixer = ClackMixer(variants: variants)
        var pending = [ClackMixer.Clack(instant: 0, board: 0, gain: 1, variant: 0)]
        var buffer: [Float] = []
        mixer.render(&buffer, frames: 240, time: 3 * ms, rate: 48_000, pending: &pending)
        #expect(mixer.late == 1)
        #expect(buffer[0] == ClackMixer.limit(variants[0][0] * mixer.volume))
    }
}

@Suite struct QuietHoursTests {
    @Test func quietHoursMaySpanMidnight() {
        let night = DailySpan(from: 22 * 60, to: 7 * 60)
        #expect(night.contains(minute: 23 * 60))
        #expect(night.contains(minute: 3 * 60))
        #expect(!night.contains(minute: 7 * 60))
        #expect(!night.contains(minute: 12 * 60))
        #expect(DailySpan(from: 12 * 60, to: 14 * 60).contains(minute: 13 * 60))
        #expect(!DailySpan(from: 0, to: 0).contains(minute: 13 * 60), "from == to: never quiet")
    }
}
