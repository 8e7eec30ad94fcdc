import Dispatch

/// Everything an `AssetWriterInput` knows, kept inside its one `Locked`: its settings
/// before the writer starts, where its samples go once it has (its track's queue in the
/// pipeline, which holds the samples and makes back-pressure), the session's bounds and
/// the `requestMediaDataWhenReady` schedule.
struct InputState {
    /// Where samples go once the writer started.
    struct Route {
        let pipeline: WritingPipeline
        let track: Int
        let timing: OpenedTrack
    }

    enum Gate {
        /// The writer has not started.
        case idle
        case open(Route)
        /// No more samples, for this reason.
        case closed(SwiftRecordError)
    }

    struct Request {
        let queue: DispatchQueue
        let block: @Sendable () -> Void
        /// Which `requestMediaDataWhenReady` call set it: a chain of calls of an older
        /// block ends when it finds a newer one.
        let generation: Int
        /// Calls in a row that appended nothing.
        var idleCalls = 0
        /// The pause before the next call: none after a call that appended, then 1 ms more
        /// for each idle call in a row, at most 10 ms.
        var idleDelayMicroseconds: Int { min(idleCalls, 10) * 1000 }
    }

    // Settings, before startWriting().
    var isAudio = false
    var realTime = false
    var transform = VideoTransform.identity
    var metadata = AssetMetadata()
    var languageCode: String?
    /// Set when this input's track decides where in-memory segments are cut.
    var segmentCuts: SegmentCuts?
    var multiPass = false
    var queueDepthSetting: Int?
    var faults = FaultInjection()
    weak var writer: AssetWriter?

    var gate = Gate.idle
    /// Where samples went once the writer started (kept after the gate closes, for counts).
    var route: Route?
    var sessionStart: MediaTime?
    var sessionEnd: MediaTime?
    var finished = false
    /// The last admitted time in the encoder's ticks and in the container's.
    var lastTicks: Int64?
    var lastStreamTicks: Int64?
    var dropped = 0
    var appended = 0
    var request: Request?
    var requestGenerations = 0
    /// The request's block is called or waits for room to be (one call at a time).
    var requestScheduled = false
    /// Per source of the track (one unless it mixes several: `mixVolumes`).
    var audioSync = [AudioSyncStatistics()]
    /// An audio input mixing several sources: each one's volume.
    var mixVolumes: [Double]?
    var audioSyncHandler: (@Sendable (AudioSyncEvent) -> Void)?

    init(isAudio: Bool = false) {
        self.isAudio = isAudio
    }

    var effectiveQueueDepth: Int {
        queueDepthSetting ?? (isAudio ? AssetWriterInput.audioQueueDepth * (mixVolumes?.count ?? 1)
                              : realTime ? AssetWriterInput.realTimeQueueDepth : AssetWriterInput.offlineQueueDepth)
    }

    /// Where to ask for room while the writer writes and the input is not finished (the
    /// pipeline is asked once this lock is let go: `isReadyForMoreMediaData`).
    var roomRoute: Route? { finished ? nil : openRoute }

    /// Where samples go, while they may.
    var openRoute: Route? {
        if case .open(let route) = gate { return route }
        return nil
    }

    /// Throws why a sample cannot be appended now, if it cannot.
    func checkAppendable() throws(SwiftRecordError) {
        switch gate {
        case .idle:
            throw writer == nil ? AssetWriterInput.notAdded
                : SwiftRecordError(.invalidState, operation: "append", message: "call startWriting() and startSession(atSourceTime:) before appending")
        case .closed(let reason):
            throw reason
        case .open:
            break
        }
        guard sessionStart != nil else {
            throw SwiftRecordError(.invalidState, operation: "append", message: "call startSession(atSourceTime:) before appending")
        }
        guard !finished else {
            throw AssetWriterInput.markedFinished
        }
    }

    /// Admits `sample` at `time`: drops it outside the session (an audio buffer is cut to
    /// the session instead), rejects a time that does not come after the previous one in
    /// the encoder's ticks or (video) in the container's, and pushes it on its track's
    /// queue; `.full` (nothing changed) when that has no room.
    mutating func admit(_ time: MediaTime, sample: TrackSample) throws(SwiftRecordError) -> AssetWriterInput.Admission {
        guard time.isNumeric else {
            throw SwiftRecordError(.invalidArgument, operation: "append", message: "presentation time is \(time.isValid ? "infinite" : "invalid"); expected a numeric MediaTime")
        }
        guard case .open(let route) = gate, let start = sessionStart else {
            throw SwiftRecordError(.invalidState, operation: "append", message: "call startSession(atSourceTime:) before appending")
        }
        if case .compressed(let buffer, _) = sample {
            return try admitCompressed(buffer, at: time, route: route, start: start)
        }
        var sample = sample, time = time
        if case .audio(let buffer, let gap, let lane) = sample {
            let lanes = mixVolumes?.count ?? 1
            guard lane >= 0, lane < lanes else {
                throw SwiftRecordError(.invalidArgument, operation: "append",
                                       message: lanes == 1 ? "mix source \(lane) given; this input records one source (0), it mixes none"
                                                           : "mix source \(lane) given; this input mixes \(lanes) sources (0..<\(lanes))")
            }
            // The part inside the session: [start, end).
            let rate = Int32(clamping: buffer.format.sampleRate)
            let skip = time < start ? Int((start - time).convertScale(rate, rounding: .up).value) : 0
            var keep = buffer.frameCount
            if let end = sessionEnd { keep = time >= end ? 0 : min(keep, Int(clamping: (end - time).convertScale(rate, rounding: .up).value)) }
            if skip >= keep {
                dropped += 1
                return .dropped
            }
            if skip > 0 || keep < buffer.frameCount {
                let part = buffer.slice(skip..<keep)
                time = time + MediaTime(value: Int64(skip), timescale: rate)
                sample = .audio(part, followsGap: gap, lane: lane)
            }
        } else if time < start || (sessionEnd.map { time >= $0 } ?? false) {
            dropped += 1
            return .dropped
        }
        let timing = route.timing
        guard let ticks = (time - start).ticks(in: timing.encoderTimeBase) else {
            throw SwiftRecordError(.invalidArgument, operation: "append", message: "presentation time \(time) is out of range")
        }
        // The muxer rescales exactly this way (av_packet_rescale_ts).
        let streamTicks = timing.encoderTimeBase.rescale(ticks, to: timing.streamTimeBase)
        // (Audio may overlap or go back: the track drops what it already played.)
        if !isAudio, let last = lastTicks, ticks <= last {
            throw SwiftRecordError(.nonIncreasingTimestamp, operation: "append",
                                   message: "presentation time \(time) does not come after the previous sample's"
                                   + (timing.encoderTimeBase.denominator != EncoderContext.variableRateTimescale
                                      ? " on the expected frame rate's grid of \(timing.encoderTimeBase.numerator)/\(timing.encoderTimeBase.denominator) s"
                                      : " at the variable-rate clock's resolution of 1/\(EncoderContext.variableRateTimescale) s")
                                   + "; times must increase")
        }
        // (An audio track makes its own sample-exact timestamps: only its order matters.)
        if !isAudio, let last = lastStreamTicks, streamTicks <= last {
            let tb = timing.streamTimeBase
            throw SwiftRecordError(.nonIncreasingTimestamp, operation: "append",
                                   message: "presentation time \(time) is within the container's time resolution (\(tb.numerator)/\(tb.denominator) s) of the previous sample's; the file could not tell them apart")
        }
        guard try push(sample, ticks: ticks, time: time, start: start, route: route) else { return .full }
        lastTicks = ticks
        lastStreamTicks = streamTicks
        appended += 1
        return .queued
    }
}

extension InputState {
    /// Admits a pass-through sample: its times on the session's timeline in the source's
    /// ticks, decode times strictly increasing (what every container needs). Nothing is
    /// cut at the session's bounds: a compressed picture cannot be cut, and the pictures
    /// after a key frame need it.
    mutating func admitCompressed(_ buffer: CompressedSampleBuffer, at time: MediaTime, route: Route,
                                  start: MediaTime) throws(SwiftRecordError) -> AssetWriterInput.Admission {
        let base = route.timing.encoderTimeBase
        guard let ticks = (time - start).ticks(in: base), let decode = (buffer.decodeTimeStamp - start).ticks(in: base) else {
            throw SwiftRecordError(.invalidArgument, operation: "append",
                                   message: "the sample's times (\(time), decode \(buffer.decodeTimeStamp)) are out of range or not numeric")
        }
        if let last = lastTicks, decode <= last {
            throw SwiftRecordError(.nonIncreasingTimestamp, operation: "append",
                                   message: "decode time \(buffer.decodeTimeStamp) does not come after the previous sample's; a pass-through track's decode times must increase")
        }
        guard try push(.compressed(buffer, decodeTicks: decode), ticks: ticks, time: time, start: start, route: route) else { return .full }
        lastTicks = decode
        appended += 1
        return .queued
    }
}

extension InputState {
    /// Pushes a sample on the track's queue; for the track that decides where in-memory
    /// segments are cut, registers a cut at it first when one is due (`SegmentCuts`).
    func push(_ sample: TrackSample, ticks: Int64, time: MediaTime, start: MediaTime, route: Route) throws(SwiftRecordError) -> Bool {
        guard let cuts = segmentCuts else { return try route.pipeline.push(sample, ticks: ticks, track: route.track) }
        let decision = cuts.plan(time: time, ticks: ticks, sessionStart: start)
        let queued: Bool
        do {
            queued = try route.pipeline.push(sample, ticks: ticks, track: route.track)
        } catch {
            cuts.retract(decision)
            throw error
        }
        if queued { cuts.commit(decision) } else { cuts.retract(decision) }
        return queued
    }
}
