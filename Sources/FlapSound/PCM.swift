import FlapWiring
import CALSA
import Foundation

/// An open ALSA playback PCM: signed 16-bit mono, interleaved. Owned by the audio thread alone.
final class PCM {
    private let handle: OpaquePointer
    let rate: Int
    let bufferFrames: Int
    let periodFrames: Int

    private init(handle: OpaquePointer, rate: Int, bufferFrames: Int, periodFrames: Int) {
        self.handle = handle; self.rate = rate; self.bufferFrames = bufferFrames; self.periodFrames = periodFrames
    }

    static func describe(_ rc: Int) -> String { String(cString: snd_strerror(Int32(rc))) }

    static func open(_ options: ClackPlayer.Options) -> Result<PCM, SoundFault> {
        var pcm: OpaquePointer?
        var rc = snd_pcm_open(&pcm, options.device, SND_PCM_STREAM_PLAYBACK, 0)
        guard rc == 0, let pcm else { return .failure(SoundFault(message: "cannot open ALSA device '\(options.device)': \(describe(Int(rc)))")) }
        let rate = options.model.sampleRate
        rc = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, UInt32(rate), 1,
                                UInt32(options.bufferMs * 1000))
        guard rc == 0 else {
            snd_pcm_close(pcm)
            return .failure(SoundFault(message: "ALSA device '\(options.device)' refused 16-bit mono at \(rate) Hz: \(describe(Int(rc)))"))
        }
        var buffer: snd_pcm_uframes_t = 0, period: snd_pcm_uframes_t = 0
        snd_pcm_get_params(pcm, &buffer, &period)
        let wanted = max(16, rate * options.periodMs / 1000)
        return .success(PCM(handle: pcm, rate: rate, bufferFrames: Int(buffer),
                            periodFrames: min(wanted, max(16, Int(period)))))
    }

    /// Writes frames, blocking while the device's buffer is full; returns frames or -errno.
    func write(_ samples: [Int16], frames: Int) -> Int {
        var done = 0
        while done < frames {
            let n = samples.withUnsafeBufferPointer { p in
                snd_pcm_writei(handle, p.baseAddress! + done, snd_pcm_uframes_t(frames - done))
            }
            if n < 0 { return Int(n) }
            done += Int(n)
        }
        return done
    }

    /// Frames written but not yet heard, or nil when the device cannot tell.
    func delay() -> Int? {
        var d: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &d) == 0 ? Int(d) : nil
    }

    func recover(_ rc: Int) -> Bool { snd_pcm_recover(handle, Int32(rc), 1) == 0 }

    func drain() { snd_pcm_drain(handle) }

    func close() { snd_pcm_close(handle) }
}

/// Why the sound device cannot be used now.
struct SoundFault: Error {
    var message: String
}
