/// Keeps an audio track on the timestamps it is given, the way SimpleScreenRecorder's
/// synchronizer does: the offset between where a buffer's first sample is stamped and
/// where it would land in the track is measured for every buffer; small offsets (jitter,
/// a device clock that runs 0.1 % off) are steered away by resampling a little faster or
/// slower (libswresample's compensation), a proportional-integral controller on the
/// smoothed offset; an offset past `hardThreshold` that persists (or follows a reported
/// gap) is closed at once by inserting silence or dropping samples.
///
/// A value type without clocks: every decision is a function of the offsets given.
package struct AudioClockSync: Sendable {
    /// What to do before converting the next buffer.
    package enum Correction: Sendable, Equatable {
        case none
        /// Resample so that `ratio` more (positive) or fewer output samples come per input sample.
        case compensate(ratio: Double)
        /// Put this much silence before the buffer (seconds).
        case insertSilence(seconds: Double)
        /// Drop this much of the output (seconds).
        case drop(seconds: Double)
    }

    /// Offsets beyond this are closed at once rather than steered (seconds).
    package static let hardThreshold = 0.040
    /// The largest resampling correction: 0.5 %, far below what an ear hears as pitch.
    package static let maximumRatio = 0.005
    /// Time constants (seconds): smoothing of the measured offset, proportional and integral terms.
    static let smoothingTime = 0.5
    static let proportionalTime = 1.0
    static let integralTime = 20.0

    package private(set) var smoothedOffset = 0.0
    package private(set) var ratio = 0.0
    private var integral = 0.0
    private var pendingHard = 0

    package init() {}

    /// `offset`: stamped time minus where the buffer would land (seconds; positive when the
    /// track runs ahead of its timestamps). `duration`: the buffer's length in seconds.
    package mutating func observe(offset: Double, duration: Double, followsGap: Bool) -> Correction {
        guard offset.isFinite, duration.isFinite, duration >= 0 else { return .none }
        if abs(offset) > AudioClockSync.hardThreshold {
            pendingHard += 1
            // One buffer stamped a little off is jitter; two in a row, a reported gap, or an
            // offset twice the threshold is real.
            if followsGap || pendingHard >= 2 || abs(offset) > 2 * AudioClockSync.hardThreshold {
                pendingHard = 0
                smoothedOffset = 0
                return offset > 0 ? .insertSilence(seconds: offset) : .drop(seconds: -offset)
            }
            return .none
        }
        pendingHard = 0
        let alpha = min(1, duration / AudioClockSync.smoothingTime)
        smoothedOffset += alpha * (offset - smoothedOffset)
        let limit = AudioClockSync.maximumRatio
        integral = min(limit, max(-limit, integral + smoothedOffset * duration
                                    / (AudioClockSync.proportionalTime * AudioClockSync.integralTime)))
        let next = min(limit, max(-limit, smoothedOffset / AudioClockSync.proportionalTime + integral))
        ratio = abs(next) < 1e-6 ? 0 : next
        return .compensate(ratio: ratio)
    }
}

/// A correction an audio track made, reported for statistics and the timing log.
public struct AudioSyncEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case silenceInserted = "audio-silence-inserted"
        case samplesDropped = "audio-samples-dropped"
        /// The periodic state of the soft correction (about once a second).
        case compensation = "audio-compensation"
    }
    public let kind: Kind
    /// Where in the track (seconds from the session's start).
    public let trackTime: Double
    /// The measured offset (seconds, stamped minus landed).
    public let offset: Double
    /// Samples inserted or dropped; 0 for `.compensation`.
    public let samples: Int
    /// The resampling ratio in force.
    public let ratio: Double
    /// Which source of a mixed track (`AssetWriterInput.mixVolumes`' index) made it; nil
    /// for a track of one source.
    public internal(set) var mixSource: Int?
}

/// What an audio track's synchronisation did so far.
public struct AudioSyncStatistics: Sendable, Equatable, Codable {
    public var buffers = 0
    public var silenceInsertions = 0
    public var silenceInsertedSamples = 0
    public var dropEvents = 0
    public var droppedSamples = 0
    /// Buffers converted with a non-zero resampling correction.
    public var compensatedBuffers = 0
    public var lastOffsetSeconds = 0.0
    public var maxAbsOffsetSeconds = 0.0
    public var ratio = 0.0
    /// Samples of silence a mix gave this source while it lagged more than half a second
    /// behind the others (a source that stopped delivering); 0 outside a mix.
    public var mixLagSilenceSamples = 0
    public init() {}
}
