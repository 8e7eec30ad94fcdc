/// Turns the capture time PulseAudio's timing info gives each chunk into presentation
/// times that count samples between corrections: monotonic, jitter-free, and following
/// the device's clock as it drifts against the host's.
///
/// Each chunk comes with a measured time (host nanoseconds at which its first sample was
/// captured, from `pa_stream_get_latency`). The measurement jitters by a fraction of a
/// millisecond to a few where libpulse's timing updates land; counting samples from one
/// anchor does not jitter but drifts (a device's crystal is 0.01–0.1 % off the host's).
/// So the filter predicts each chunk's time by counting samples from the anchor, then
/// moves the anchor a sixteenth of the way to the measurement — by at most a tenth of the
/// previous chunk's length, so times always increase and chunks overlap by less than that
/// — and starts afresh at the measurement after a gap.
package struct PulseTimestampFilter: Sendable {
    /// Measured times later than predicted by more than this mean samples went missing
    /// without libpulse reporting a hole (the server overran our buffer): the filter
    /// re-anchors and the chunk is marked as following a gap. 30 ms is well beyond the
    /// measurement's jitter and well below what an ear or a lip-sync check would notice.
    package static let resyncThresholdNanoseconds: Int64 = 30_000_000
    /// The share of the measured error corrected per chunk (1/16: with 10 ms chunks
    /// jitter is averaged over ~160 ms, and a 0.1 % drift costs 16 µs of lag).
    package static let correctionDivisor: Int64 = 16
    /// The most a chunk's time moves from the count, as a fraction of the previous chunk.
    package static let maxSlewDivisor: Int64 = 10

    package let sampleRate: Int
    private var anchor: Int64?
    private var framesSinceAnchor: Int64 = 0
    private var lastFrames: Int64 = 0

    package init(sampleRate: Int) {
        self.sampleRate = max(1, sampleRate)
    }

    private func nanoseconds(_ frames: Int64) -> Int64 {
        frames.multipliedReportingOverflow(by: 1_000_000_000).partialValue / Int64(sampleRate)
    }

    /// The presentation time of a chunk of `frames` frames measured to start at `measured`
    /// (host ns); `gap` says samples were lost just before it (a hole, an overflow, a
    /// suspend). An untrusted measurement (a guess from the arrival time) is only slewed
    /// towards, never jumped to. Returns the time and whether the chunk follows a gap.
    package mutating func timestamp(measured: Int64, frames: Int, gap: Bool, trusted: Bool = true) -> (nanoseconds: Int64, followsGap: Bool) {
        defer {
            framesSinceAnchor += Int64(frames)
            lastFrames = Int64(frames)
        }
        guard let anchor, !gap else {
            start(at: measured)
            return (measured, gap)
        }
        let predicted = anchor + nanoseconds(framesSinceAnchor)
        let error = measured - predicted
        if trusted, error > PulseTimestampFilter.resyncThresholdNanoseconds {
            start(at: measured)
            return (measured, true)
        }
        let limit = nanoseconds(lastFrames) / PulseTimestampFilter.maxSlewDivisor
        let correction = min(max(error / PulseTimestampFilter.correctionDivisor, -limit), limit)
        self.anchor = anchor + correction
        return (predicted + correction, false)
    }

    private mutating func start(at time: Int64) {
        anchor = time
        framesSinceAnchor = 0
    }
}
