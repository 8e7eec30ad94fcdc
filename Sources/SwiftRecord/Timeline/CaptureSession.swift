import Dispatch

/// Drives a capture source into an asset writer: pulls frames, turns their capture times
/// into presentation times on a constant-frame-rate grid, and appends them through the adaptor.
///
/// A live source is paced on a capture thread of its own (`LiveCaptureLoop`), where a
/// `LiveScheduler` decides each frame's fate: one grab per frame tick, at the tick's time (a
/// timed wait, no polling); a tick whose grab came too late repeats the previous picture, so
/// the file has exactly one frame per tick. The capture thread never waits for the encoder:
/// frames it has no room for wait in order, up to `maximumFill`, and are handed over as soon
/// as the queue has room; past it the oldest is left as a gap, counted. Memory stays flat
/// (new pictures are bounded by the capture pool). `pause()` and `resume()` stop and continue
/// the grid without a gap in the file. Each sound source runs on a thread of its own
/// (`AudioTrackRunner`), each extra video track beside the pictures (`VideoTrackRunner`).
///
/// An offline source (a file, the unpaced synthetic scene) is read as fast as the encoder
/// takes frames, frame n at n / rate (`OfflineCaptureLoop`); pausing does not apply to it.
///
/// For a live source, the session's clock and the source's must be the same monotonic
/// clock (the default).
///
/// What ``MediaCaptureSession`` (the counterpart of `AVCaptureSession`) runs for a movie
/// file; usable on its own when the writer is set up already.
public final class CaptureSession: Sendable {
    /// Where the pictures come from.
    public let source: any CaptureSource
    /// The writer the pictures go to; the caller starts and finishes it.
    public let writer: AssetWriter
    /// The adaptor of the writer's video input, set up for the source's size and pixel format.
    public let adaptor: PixelBufferAdaptor
    /// Frames per second of the recording: one output frame per tick of this rate.
    public let frameRate: Rational
    /// When the session stops by itself.
    public let limit: CaptureLimit
    /// Where each frame's timing decision is written, if anywhere.
    public let timingLog: TimingLog?
    /// Sound recorded beside the pictures: each source into its own audio input (track),
    /// in the order given.
    public let audioCaptures: [AudioCapture]
    /// The first sound source, if any (`audioCaptures.first`).
    public var audio: AudioCapture? { audioCaptures.first }
    /// One frame per tick, or frames only where the picture changed.
    public let frameRateMode: FrameRateMode
    /// More picture sources, each on a video track of its own beside the pictures (a camera
    /// beside the screen), on the same timeline.
    public let videoCaptures: [VideoTrackCapture]
    /// The extra video tracks while running.
    let videoTracks: [VideoTrackRunner]

    struct State {
        var stats = CaptureStatistics()
        var startedAt: MediaTime?
        var pool: PixelBufferPool?
        var simulatedSourceStall: (frame: Int64, duration: Duration)?
        var maximumFill = CaptureSession.defaultMaximumFill
        /// The tick after the last one written or left out: where the pictures end.
        var endTick: Int64 = 0
        /// Output time of the stop (live), which can come long before `endTick`'s time.
        var stopTime: MediaTime?
    }
    let state = Locked(State())
    let pacer = Pacer()
    let pauseSwitch = PauseSwitch()
    /// The capture thread, which a stop that gives up on it abandons.
    private let captureThread = ThreadTask()
    let clock: any HostClock
    /// The pictures' host-to-output clock and end, for the sound tracks.
    let pictures = PictureClock()
    /// The sound sources while running, in `audioCaptures`' order.
    let audioTracks: [AudioTrackRunner]

    /// Source buffers in flight beyond the input's queue: the one being captured, one
    /// waiting for room, one spare. Frames waiting for room beyond that share pictures
    /// (repeats); a grab that finds no free buffer makes its tick a repeat.
    static let sourcePoolHeadroom = 3

    /// How long ticks may wait for room in the encoder's queue (`maximumFill`) by default.
    public static let defaultMaximumFill: Duration = .seconds(2)

    /// How much media may wait for room in the encoder's queue at a constant frame rate:
    /// within it, every tick the encoder could not take at once is written late (a stall
    /// leaves no hole in the file); past it, the oldest waiting tick is left as a gap. Set
    /// before `run()`.
    public var maximumFill: Duration {
        get { state[\.maximumFill] }
        set { state[\.maximumFill] = newValue }
    }

    /// Once, right before grabbing the picture for output frame `frame`, the capture
    /// thread sleeps `duration` (tests: a source that stalls, making a burst of late ticks).
    package var simulatedSourceStall: (frame: Int64, duration: Duration)? {
        get { state[\.simulatedSourceStall] }
        set { state[\.simulatedSourceStall] = newValue }
    }

    /// A session recording `source` through `adaptor` into `writer` at `frameRate` until `limit`.
    /// Start the writer and its session (at zero) first; `clock` must be the source's clock
    /// (the monotonic clock, for a live source), `timingLog` receives every frame's decision,
    /// `audio` records sound beside the pictures into an input of the same writer, and
    /// `frameRateMode` says whether unchanged ticks are written.
    public convenience init(source: any CaptureSource, writer: AssetWriter, adaptor: PixelBufferAdaptor,
                            frameRate: Rational, limit: CaptureLimit = CaptureLimit(), clock: any HostClock = MonotonicClock(),
                            timingLog: TimingLog? = nil, audio: AudioCapture? = nil, frameRateMode: FrameRateMode = .constant) {
        self.init(source: source, writer: writer, adaptor: adaptor, frameRate: frameRate, limit: limit, clock: clock,
                  timingLog: timingLog, audioCaptures: audio.map { [$0] } ?? [], frameRateMode: frameRateMode)
    }

    /// A session recording the pictures with several sound sources, each into its own
    /// audio input of the same writer (its own track: desktop and microphone apart, as
    /// ReplayKit's `.audioApp` and `.audioMic` buffers are). Each source's clock is brought
    /// to the pictures' as a single source's is (drift corrected, gaps filled with silence,
    /// pauses cut and faded); one source ending early leaves the others recording, and its
    /// track is filled with silence to the end. `videoCaptures` adds more picture sources,
    /// each on a video track of its own (``VideoTrackCapture``).
    public init(source: any CaptureSource, writer: AssetWriter, adaptor: PixelBufferAdaptor,
                frameRate: Rational, limit: CaptureLimit = CaptureLimit(), clock: any HostClock = MonotonicClock(),
                timingLog: TimingLog? = nil, audioCaptures: [AudioCapture], videoCaptures: [VideoTrackCapture] = [],
                frameRateMode: FrameRateMode = .constant) {
        (self.source, self.writer, self.adaptor) = (source, writer, adaptor)
        (self.audioCaptures, self.videoCaptures) = (audioCaptures, videoCaptures)
        videoTracks = videoCaptures.map(VideoTrackRunner.init)
        let (log, started) = (timingLog, state)
        audioTracks = AudioTrackRunner.runners(for: audioCaptures, pictures: pictures) { time, reason in
            let host = started.withLock { $0.startedAt }.map { (clock.now() - $0).seconds } ?? 0
            log?.record(frame: nil, presentationTime: time, captureTime: nil, hostTime: host, reason: reason)
        }
        (self.frameRateMode, self.frameRate, self.limit, self.clock, self.timingLog) = (frameRateMode, frameRate, limit, clock, timingLog)
    }

    /// What the session has done so far (or did): frames written, repeated and dropped, pauses, times.
    public var statistics: CaptureStatistics {
        let (stats, startedAt, pool) = state.withLock { ($0.stats, $0.startedAt, $0.pool) }
        var s = stats
        if let t = startedAt { s.elapsedSeconds = (clock.now() - t).seconds }
        s.audioTracks = audioTracks.map(\.statistics)
        s.audio = s.audioTracks.first
        s.pixelBufferAllocations = (pool?.storageAllocationCount ?? 0) + adaptor.conversionStorageAllocations
        s.grabs = source.grabStatistics
        s.videoTracks = videoTracks.map(\.statistics)
        return s
    }

    /// How long `stop()` waits for a capture thread stuck in its source (a grab from a
    /// frozen X server) before the session ends without it, at the last frame captured.
    public static let stopGrace: Duration = .milliseconds(1500)

    /// How long a live source may take to deliver its first picture before the recording
    /// fails saying it did not answer (a display server that is stopped or hung, a camera
    /// that sends nothing).
    public static let firstPictureTimeout: Duration = .seconds(5)

    /// Asks the session to stop after the frame in progress. Safe from any thread or a
    /// signal handler's queue. If the source does not return within `stopGrace`, `run()`
    /// ends anyway, throwing an error that says so; what was captured is kept. A stop
    /// before the source's first picture ends `run()` with a `.cancelled` error saying so
    /// (nothing was recorded), not as a source that did not answer.
    public func stop() {
        pacer.interrupt()
        let grace = CaptureSession.stopGrace
        let name = source.identifier
        // The capture thread gives a stuck grab `stopGrace` itself and returns; this is the
        // backstop, a second later, should it not.
        DispatchQueue.global().asyncAfter(deadline: .now() + grace.seconds + 1) { [captureThread] in
            captureThread.abandon(with: SwiftRecordError(
                .io, operation: name,
                message: "the source did not return within \(grace.seconds) s of stopping (a frozen display server?); the recording ends at the last frame captured"))
        }
    }

    /// Pauses a live recording: no grabs, no frames, until `resume()`. Safe from any thread.
    /// Once the frames before the pause are appended, the video encoder writes out what it
    /// holds back (its look-ahead), so the file has every one of them while paused; the
    /// recording resumes on a key frame.
    public func pause() { setPaused(true) }

    /// Resumes a paused recording; the file continues without a gap.
    public func resume() { setPaused(false) }

    /// Pauses if running, resumes if paused. Returns true if now paused.
    @discardableResult
    public func togglePause() -> Bool { setPaused(nil) }

    /// True when a pause has been asked for (and not yet undone).
    public var isPaused: Bool { pauseSwitch.isRequested }

    @discardableResult
    private func setPaused(_ paused: Bool?) -> Bool {
        defer { pacer.wake() }
        return pauseSwitch.set(paused)
    }

    /// While paused, waits (up to `timeout`) until every frame recorded before the pause is in
    /// the file, the encoder's look-ahead included: then a replay clip saved has them all.
    /// Returns at once when not paused; false if the time ran out first.
    package func waitUntilPauseIsWritten(timeout: Duration) -> Bool {
        pauseSwitch.waitUntilWritten(untilNanoseconds: MonotonicClock.deadline(after: timeout))
    }

    /// The presentation time of output frame `n`: n / frame rate, exactly.
    func presentationTime(ofFrame n: Int64) -> MediaTime {
        MediaTime(value: n * Int64(frameRate.denominator), timescale: frameRate.numerator)
    }

    /// The rules the frames follow: the fill limit, the frame limit, the content gate.
    var timing: CaptureTiming {
        CaptureTiming(frameRate: frameRate, limit: limit, maximumFill: maximumFill, mode: frameRateMode,
                      settles: !writer.liveOutputs.isEmpty, firstPictureTimeout: CaptureSession.firstPictureTimeout,
                      closeDelay: source.arrivalAllowance)
    }


    /// Runs until the source ends, the limit is reached, or `stop()`; then marks the input
    /// finished. The caller finishes the writer (so it can do so on every path).
    public func run() async throws -> CaptureStatistics {
        try source.start()
        defer { source.stop() }
        var started: [AudioCapture] = []
        defer { for capture in started { capture.source.stop() } }
        for capture in audioCaptures {
            try capture.source.start()
            started.append(capture)
        }
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: source.pixelFormat,
                                       maximumBufferCount: adaptor.assetWriterInput.queueDepth + CaptureSession.sourcePoolHeadroom)
        let t0 = clock.now()
        state.withLock { s in
            s.startedAt = t0
            s.pool = pool
        }
        defer { timingLog?.close() }
        var startedTracks: [VideoTrackRunner] = []
        defer {
            // A finished input wakes a watch for room (`RoomWatch`) and starts no other.
            adaptor.assetWriterInput.markAsFinished()
            for capture in audioCaptures { capture.input.markAsFinished() }
            for track in startedTracks { track.finish() }
        }
        for track in videoTracks {
            try track.start()
            startedTracks.append(track)
        }
        guard source.isLive else {
            try await OfflineCaptureLoop(session: self, pool: pool, origin: t0).run()
            return statistics
        }
        try await LiveCaptureLoop.record(session: self, pool: pool, origin: t0, on: captureThread)
        return statistics
    }

}
