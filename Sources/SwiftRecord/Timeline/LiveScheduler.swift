import DequeModule

/// Decides every frame's fate in a live recording: one grab per tick of the frame grid, a
/// tick whose grab came late repeating the picture before, frames that find the encoder's
/// queue full waiting in order (a stall leaves no hole in the file), the oldest past
/// `fillLimit` ticks left as a gap, pauses that end the encoder's run, ticks left out at a
/// content-driven rate, a source stuck in a grab, and the end.
///
/// A value without threads or clocks, like the `SessionTimeline` it drives: the capture
/// thread (`LiveCaptureLoop`) passes it the time, the pause asked for and each grab's
/// outcome; it answers with what to wait for, and does what it decided through
/// ``LiveEffects`` (append, end the encoder's run, grab, log). Tests drive it with a fake
/// clock and fake effects, so a two-second stall runs in a millisecond.
struct LiveScheduler<Picture> {
    /// What a grab brought.
    enum Grab {
        /// A picture captured at host time `captureTime`; `unchanged`: the source says it is
        /// the one it gave last.
        case picture(Picture, captureTime: MediaTime, unchanged: Bool)
        /// Every capture buffer was in use: no picture for this tick.
        case noBuffer
        /// No picture was due yet (a source that queues its own: `arrivalAllowance`): ask again.
        case notReady
        /// The source ended.
        case ended
    }

    /// A grab's outcome (`GrabWorker`'s) as the scheduler takes it, the picture made from the
    /// frame by `picture`: an exhausted pool is no picture this tick, nothing due yet is
    /// asked again (`.notReady`), any other error ends the recording.
    static func grab(_ result: Result<CapturedFrame?, any Error>, _ picture: (CapturedFrame) -> Picture) throws -> Grab {
        do {
            guard let frame = try result.get() else { return .ended }
            return .picture(picture(frame), captureTime: frame.captureTime, unchanged: frame.isUnchanged)
        } catch let e as SwiftRecordError where e.kind == .poolExhausted {
            return .noBuffer
        } catch let e as SwiftRecordError where e.kind == .notReady {
            return .notReady
        }
    }

    /// What the capture thread does next.
    enum Next: Equatable {
        /// Wait until this host time (monotonic nanoseconds), for ever if nil, or until woken
        /// (a grab returned, room, a pause) or stopped; then `turn` again.
        case wait(untilNanoseconds: Int64?)
        /// The recording is over: call `finish`.
        case finish
    }

    /// Why a live recording failed (the capture thread turns these into errors naming the source).
    enum Failure: Error, Equatable {
        /// The first grab took longer than `firstPictureTimeout`.
        case noFirstPicture
        /// A stop came before the first picture: nothing was recorded.
        case stoppedBeforeFirstPicture
        /// The source did not return from the grab asked for at this host time (nanoseconds).
        case sourceStuck(sinceNanoseconds: Int64)
    }

    /// A frame waiting for room in the encoder's queue.
    struct Held {
        let picture: Picture
        let frame: SessionTimeline.Frame
        let unchanged: Bool
        /// A later tick's frame queued behind this one: written late, to fill its tick
        /// (logged as `filled`).
        var filled = false
    }

    let settings: CaptureTiming
    var timeline: SessionTimeline
    /// Everything decided so far (the figures of `CaptureStatistics` a live loop keeps).
    var statistics = CaptureStatistics()
    /// The tick after the last one written or left out: where the pictures end.
    var endTick: Int64 = 0
    /// When the grab not yet returned was asked for (host nanoseconds).
    private(set) var grabOutstandingSince: Int64?
    /// Frames waiting for room, oldest first: at most `fillLimit`.
    var pending = Deque<Held>()
    /// The picture repeats show: the last one captured (nil while a grab is out).
    var last: Picture?
    /// `last` while a grab is out: it comes back when the grab returns, for the ticks that
    /// closed meanwhile (repeats of it, as the log says, the late picture showing from its
    /// own tick on), or when the grab finds no free buffer. Held, the source cannot write
    /// into it (a pool reuses a buffer once it is let go; an X11 capture writes in place
    /// only into a picture no one else holds).
    private var lastBeforeGrab: Picture?
    /// Every capture buffer was in use, or nothing was due: no new grab before this host time.
    private var noBufferUntil: Int64?
    /// Paused, with the encoder's run to end once every frame before the pause is appended.
    var runEndsAt: MediaTime?
    var gate: ContentFrameGate?
    var done = false
    /// A stop ended the recording (not the limit, nor the source).
    private(set) var stopped = false
    /// Host time of the start: log times are seconds since it.
    let origin: MediaTime

    init(settings: CaptureTiming, startingAt origin: MediaTime) {
        self.settings = settings
        self.origin = origin
        gate = settings.gate
        timeline = SessionTimeline(frameRate: settings.frameRate)
        timeline.start(at: origin)
        pending.reserveCapacity(settings.fillLimit + 1)
    }

    private var limitReached: Bool {
        settings.frameLimit.map { timeline.nextFrameIndex >= $0 } ?? false
    }

    private static func nanoseconds(_ t: MediaTime) -> Int64 { t.convertScale(1_000_000_000, rounding: .up).value }

    /// A stop was asked for: the next `turn` says `.finish`.
    mutating func stop() {
        done = true
        stopped = true
    }

    /// One turn of the capture loop at host time `now`, with the pause the user asks for and
    /// the outcome of the grab, if one came back since the last turn. Throws `Failure` when
    /// the source gave no first picture in time, and what the effects throw.
    mutating func turn<E: LiveEffects>(now: MediaTime, pauseRequested: Bool, grab: Grab?,
                                       effects: inout E) throws -> Next where E.Picture == Picture {
        if grab != nil { grabOutstandingSince = nil }
        if done || limitReached { return .finish }
        // A pause or resume asked for since the last turn (between grabs, as ever). A grab
        // returning now brings a picture captured before now: it goes in first, so the ticks
        // that closed during the grab repeat it (paused first, they had no picture: a gap).
        if grab == nil && grabOutstandingSince == nil && pauseRequested && timeline.state == .running {
            try handle(timeline.pause(at: now), captured: nil, now: now, effects: &effects)
            statistics.isPaused = true
            statistics.pauses += 1
        } else if grabOutstandingSince == nil && !pauseRequested && timeline.state == .paused {
            try handle(timeline.resume(at: now), captured: nil, now: now, effects: &effects)
            statistics.isPaused = false
            statistics.pausedSeconds = Double(timeline.counts.pausedNanoseconds) / 1e9
        }
        if done { return .finish }
        // Frames waiting for room go as soon as there is some, oldest first.
        try appendPending(now: now, effects: &effects)
        if !pending.isEmpty { effects.watchForRoom() }
        // Paused, and every frame before the pause appended: the encoder writes out what it
        // holds back, so the file (and a replay clip saved while paused) ends at the pause.
        if pending.isEmpty, let end = runEndsAt {
            runEndsAt = nil
            try effects.endEncoderRun(at: end)
        }
        switch grab {
        case .noBuffer?:
            // Every capture buffer is still held (by the encoder, or frames waiting for it):
            // the tick closes as a repeat of the last picture; no new grab before it closes.
            last = lastBeforeGrab
            lastBeforeGrab = nil
            noBufferUntil = timeline.nextTickCloseTime.map(LiveScheduler.nanoseconds)
            statistics.framesDropped += 1
            effects.log(entry(frame: nil, captureTime: nil, now: now, reason: "dropped-no-buffer"))
            return try turn(now: now, pauseRequested: pauseRequested, grab: nil, effects: &effects)
        case .notReady?:
            // Nothing due yet from a source that queues its pictures: the tick stays open until
            // `closeDelay` after its close; asked again a quarter of a tick from now.
            last = lastBeforeGrab
            lastBeforeGrab = nil
            noBufferUntil = LiveScheduler.nanoseconds(now) + 250_000_000 * Int64(settings.frameRate.denominator) / Int64(max(1, settings.frameRate.numerator))
            return try turn(now: now, pauseRequested: pauseRequested, grab: nil, effects: &effects)
        case .ended?:
            done = true
            return .finish
        case .picture(let picture, let captureTime, let unchanged)?:
            last = lastBeforeGrab
            lastBeforeGrab = nil
            try handle(timeline.frameArrived(at: captureTime), captured: picture, unchanged: unchanged, now: now, effects: &effects)
            return try turn(now: now, pauseRequested: pauseRequested, grab: nil, effects: &effects)
        case nil:
            break
        }
        let nowNs = LiveScheduler.nanoseconds(now)
        if let since = grabOutstandingSince {
            if timeline.counts.captured == 0 {
                // Before the first picture: the start-up bound.
                let bound = since + settings.firstPictureTimeout.nanoseconds
                if nowNs >= bound { throw Failure.noFirstPicture }
                return .wait(untilNanoseconds: bound)
            }
            // Waiting for the grab, until the limit's end: the ticks up to it close without
            // a picture (counted) and the recording ends there.
            let end = settings.frameLimit.flatMap { timeline.tickTime(ofFrame: $0) }.map(LiveScheduler.nanoseconds)
            guard let end, nowNs >= end else { return .wait(untilNanoseconds: end) }
            try handle(timeline.advance(to: now), captured: nil, now: now, effects: &effects)
            return .finish
        }
        let tick = timeline.nextTickTime.map(LiveScheduler.nanoseconds).map { max($0, noBufferUntil ?? $0) }
        guard let tick, nowNs >= tick else { return .wait(untilNanoseconds: tick) }
        // The tick: repeats for ticks that closed without a picture (`closeDelay` later for a
        // source that queues its pictures), then a grab.
        try handle(timeline.advance(to: now - settings.closeDelay), captured: nil, now: now, effects: &effects)
        if done || limitReached { return .finish }
        // Every tick closed so far has its frame. The ticks closing during the grab are
        // repeats of the last picture once it returns; if it never does (a source stuck at
        // the limit's end), they had no picture (missed).
        lastBeforeGrab = last
        last = nil
        noBufferUntil = nil
        grabOutstandingSince = nowNs
        effects.requestGrab(forFrame: timeline.nextFrameIndex)
        return try turn(now: now, pauseRequested: pauseRequested, grab: nil, effects: &effects)
    }

    /// Ends the recording at host time `now`: ticks closed by then are repeated, and the
    /// frames waiting for room are appended, waiting for the encoder. `grabStuck`: the grab
    /// still out did not return within the stop's grace, which throws `Failure` (after the
    /// frames are in). Returns the output time of the stop, if a picture came before it.
    mutating func finish<E: LiveEffects>(now: MediaTime, grabStuck: Bool, effects: inout E) throws -> MediaTime?
        where E.Picture == Picture {
        let stopNs = timeline.outputClock.outputNanoseconds(atHost: now.convertScale(1_000_000_000, rounding: .down).value)
        try handle(timeline.stop(at: now), captured: nil, now: now, effects: &effects)
        // Capture is over: the frames waiting for room may wait for the encoder now.
        while let next = pending.popFirst() {
            try effects.appendWaiting(next.picture, at: next.frame.presentationTime)
            written(next, now: now, effects: &effects)
        }
        statistics.isPaused = false
        statistics.pausedSeconds = Double(timeline.counts.pausedNanoseconds) / 1e9
        if grabStuck, let since = grabOutstandingSince {
            if timeline.counts.captured == 0 { throw stopped ? Failure.stoppedBeforeFirstPicture : Failure.noFirstPicture }
            throw Failure.sourceStuck(sinceNanoseconds: since)
        }
        return stopNs.map { MediaTime(value: $0, timescale: 1_000_000_000) }
    }
}

/// The rules a recording's frames follow, worked out once from the session's settings.
struct CaptureTiming {
    var frameRate: Rational
    /// How many ticks may wait for room in the encoder's queue; past it the oldest is a gap.
    var fillLimit: Int
    /// Frames the recording's limit allows (frames whose time is before its duration), if any.
    var frameLimit: Int64?
    /// How long the first grab may take before the source is said not to answer.
    var firstPictureTimeout: Duration
    /// Which ticks are written, at a content-driven frame rate (nil: every tick).
    var gate: ContentFrameGate?
    /// How much later than its window's end a tick closes without a picture: the source's
    /// `arrivalAllowance` (zero but for a source that queues its pictures with their times).
    var closeDelay = MediaTime.zero

    init(frameRate: Rational, fillLimit: Int, frameLimit: Int64? = nil, firstPictureTimeout: Duration = .seconds(5),
         gate: ContentFrameGate? = nil, closeDelay: Duration = .zero) {
        (self.frameRate, self.fillLimit, self.frameLimit) = (frameRate, fillLimit, frameLimit)
        (self.firstPictureTimeout, self.gate) = (firstPictureTimeout, gate)
        self.closeDelay = MediaTime(value: closeDelay.nanoseconds, timescale: 1_000_000_000)
    }

    /// `maximumFill` as ticks of `frameRate` (at least one); the limit as frames; at a
    /// content-driven rate, a gate admitting a frame at least every interval (its ticks,
    /// rounded down, at least one), which `settles` (writes a still picture out in full
    /// soon) for a live stream.
    init(frameRate: Rational, limit: CaptureLimit, maximumFill: Duration, mode: FrameRateMode,
         settles: Bool, firstPictureTimeout: Duration, closeDelay: Duration = .zero) {
        let fill = Int128(maximumFill.nanoseconds) * Int128(frameRate.numerator) / (Int128(frameRate.denominator) * 1_000_000_000)
        var frames = limit.frames.map(Int64.init)
        if let d = limit.duration, d.isNumeric, frameRate.numerator > 0 {
            // Frames n with n * den / num < d: n < d * num / den.
            let n = Int128(d.value) * Int128(frameRate.numerator)
            let q = Int128(d.timescale) * Int128(frameRate.denominator)
            let count = Int64(clamping: (n + q - 1) / q)
            frames = min(frames ?? count, count)
        }
        var gate: ContentFrameGate?
        if case .content(let interval) = mode {
            let ticks = Int128(interval.value) * Int128(frameRate.numerator) / max(1, Int128(interval.timescale) * Int128(frameRate.denominator))
            gate = ContentFrameGate(maximumTicks: Int64(clamping: ticks), settles: settles)
        }
        self.init(frameRate: frameRate, fillLimit: Int(clamping: max(1, fill)), frameLimit: frames,
                  firstPictureTimeout: firstPictureTimeout, gate: gate, closeDelay: closeDelay)
    }
}
