import Foundation

/// A quiet 440 Hz tone with a 2-ms click wherever the synthetic scene flashes (every
/// `SyntheticScene.flashInterval` frames at the options' frame rate), so a recording's
/// A/V offset can be measured from the file. 16-bit interleaved, in 10-ms buffers.
///
/// Offline (the default) it is as fast as it is read, stamped by sample count. Live
/// (`realtime`) it delivers each buffer when its last sample is due on the host clock,
/// stamped with the host time of its first sample, like a sound card; `clockSkew` makes
/// its sample clock run off (0.001: 0.1 % fast), like a sound card whose crystal is off.
public final class SyntheticAudioSource: AudioCaptureSource {
    public static let name = "synthetic"
    public let identifier = SyntheticAudioSource.name
    public let format: AudioFormat
    public let isLive: Bool
    private let frameRate: Rational
    private let clock: any HostClock
    private let skew: Double
    private let flashClock: SyntheticFlashClock?
    private let chunk: Int

    private struct State {
        var next = 0
        var startedAt: MediaTime?
        var interrupted = false
        /// nextChunk() before start() was said in the log.
        var warnedUnstarted = false
    }
    private let state = Locked(State())

    public init(options: AudioSourceOptions) throws {
        let f = AudioFormat(sampleType: .s16, sampleRate: options.sampleRate, channelLayout: options.channelLayout)
        try f.validate("synthetic audio")
        guard options.frameRate.numerator > 0, options.frameRate.denominator > 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "synthetic audio", message: "frame rate \(options.frameRate) must be positive")
        }
        guard options.clockSkew.isFinite, abs(options.clockSkew) < 0.1 else {
            throw SwiftRecordError(.invalidArgument, operation: "synthetic audio",
                                   message: "clock skew \(options.clockSkew) is out of range; expected between -0.1 and 0.1")
        }
        format = f
        isLive = options.realtime
        frameRate = options.frameRate
        clock = options.clock
        skew = options.clockSkew
        flashClock = options.flashClock
        chunk = max(1, options.sampleRate / 100)
    }

    public var captureDescription: String? {
        "a 440 Hz tone clicking on the scene's flashes, \(format)" + (skew != 0 ? ", sample clock \(skew * 100) % off" : "")
    }

    public func start() throws {
        let now = clock.now()
        state.withLock { if $0.startedAt == nil { $0.startedAt = now } }
    }

    public func stop() {}

    public func interrupt() {
        state.withLockNotifying { $0.interrupted = true }
    }

    /// Samples per host second: the nominal rate, off by the skew.
    private var trueRate: Double { Double(format.sampleRate) * (1 + skew) }

    public func nextChunk() throws -> CapturedAudio? {
        var unstarted = false
        guard let (k, origin) = state.withLock({ s -> (Int, MediaTime)? in
            guard !s.interrupted else { return nil }
            guard let start = s.startedAt else {
                unstarted = !s.warnedUnstarted
                s.warnedUnstarted = true
                return nil
            }
            defer { s.next += 1 }
            return (s.next, start)
        }) else {
            if unstarted {
                Log.capture.warning("the synthetic audio source (\(captureDescription ?? identifier)) was read before start(): it gives no samples, and its track stays empty; call start() first")
            }
            return nil
        }
        let first = k * chunk
        var time = MediaTime(value: Int64(first), timescale: Int32(format.sampleRate))
        if isLive {
            // Due when its last sample has been "captured" on the skewed sample clock.
            let startNs = origin.convertScale(1_000_000_000).value
            let dueNs = startNs + Int64((Double(first + chunk) / trueRate * 1e9).rounded())
            let stopped = state.wait(untilNanoseconds: dueNs) { s -> Bool? in
                s.interrupted ? true : (MonotonicClock.nanoseconds() >= dueNs ? false : nil)
            } ?? false
            if stopped { return nil }
            time = MediaTime(value: startNs + Int64((Double(first) / trueRate * 1e9).rounded()), timescale: 1_000_000_000)
        }
        let samples = render(first: first, origin: origin)
        return CapturedAudio(samples: try AudioSampleBuffer(format: format, presentationTimeStamp: time, interleaved: samples))
    }

    /// Sample positions (in this source's own count) where clicks start, in `range`.
    private func clicks(in range: Range<Int>, origin: MediaTime) -> [Int] {
        let rate = Double(format.sampleRate)
        let period = Double(SyntheticScene.flashInterval) * Double(frameRate.denominator) / Double(frameRate.numerator)
        var result: [Int] = []
        if isLive {
            // Flashes happen at frame zero's host time plus whole periods; a flash at host
            // time h is sample (h - start) * true rate of this source.
            guard let zero = flashClock?.frameZeroTime else { return [] }
            let offset = (zero - origin).seconds
            let lo = Double(range.lowerBound - 400) / trueRate - offset
            var j = max(0, Int((lo / period).rounded(.down)))
            while true {
                let position = Int(((offset + Double(j) * period) * trueRate).rounded())
                if position >= range.upperBound { break }
                if position >= range.lowerBound - 400 { result.append(position) }
                j += 1
            }
        } else {
            var j = max(0, Int((Double(range.lowerBound - 400) / rate / period).rounded(.down)))
            while true {
                let position = Int((Double(j) * period * rate).rounded())
                if position >= range.upperBound { break }
                if position >= range.lowerBound - 400 { result.append(position) }
                j += 1
            }
        }
        return result
    }

    private func render(first: Int, origin: MediaTime) -> [Int16] {
        let channels = format.channelCount
        let rate = Double(format.sampleRate)
        let clickLength = max(1, format.sampleRate / 500)
        let starts = clicks(in: first..<(first + chunk), origin: origin)
        var out = [Int16](repeating: 0, count: chunk * channels)
        for i in 0..<chunk {
            let n = first + i
            var v = 0.1 * sin(2 * Double.pi * 440 * Double(n) / rate)
            for c in starts where n >= c && n < c + clickLength {
                v = (n - c) % 8 < 4 ? 0.9 : -0.9
            }
            let sample = Int16(v * 32_767)
            for ch in 0..<channels { out[i * channels + ch] = sample }
        }
        return out
    }
}
