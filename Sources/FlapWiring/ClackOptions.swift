import FlapCore

/// How the clack plays: the ALSA device, volume, buffering, quiet hours, the model.
public struct ClackOptions: Sendable, Equatable {
    /// ALSA PCM name (`default`, `hw:1,0`, `file:FILE=/tmp/out.wav,FORMAT=wav`, …).
    public var device = "default"
    public var volume: Float = 0.8
    /// How far ahead of the clock the stream is written (ALSA buffer), and one write.
    public var bufferMs = 20
    public var periodMs = 5
    /// Silent in this span of the local day (from == to: never silent), judged at each clack's
    /// own instant.
    public var quiet = DailySpan(from: 0, to: 0)
    public var model = ClackModel()
    /// Seconds between tries to open a missing device.
    public var retrySeconds = 5.0
    public init() {}
}
