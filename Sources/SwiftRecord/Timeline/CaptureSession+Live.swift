import DequeModule
import Foundation

extension CaptureSession {
    /// A frame that found the encoder's queue full, waiting for room.
    struct Held {
        let buffer: PixelBuffer
        let frame: SessionTimeline.Frame
        let unchanged: Bool
        /// A later tick's frame queued behind this one: it is written late, to fill its
        /// tick, where a real-time recorder would drop it (logged as `filled`).
        var filled = false
    }

    /// The live loop's state, used only on the capture thread.
    struct LiveState {
        var timeline: SessionTimeline
        /// The picture repeats show: the last one captured and shown.
        var last: PixelBuffer?
        /// `last` while a grab is out (the loop lets go of it for the grab): it comes back
        /// if the grab finds no free buffer, so the tick can still repeat it.
        var lastBeforeGrab: PixelBuffer?
        /// Frames waiting for room in the encoder's queue, oldest first: one per tick, so
        /// the file keeps one frame per tick through a stall. At most `fillLimit` of them
        /// (repeats share their picture; new pictures are bounded by the capture pool).
        var pending: Deque<Held>
        /// How many ticks may wait for room; beyond it the oldest is left as a gap.
        let fillLimit: Int
        /// Every capture buffer was in use at the last grab: no new grab before this host
        /// time (monotonic nanoseconds; the close of the tick), so the loop does not spin.
        var noBufferUntil: Int64?
        var done = false
        /// Which ticks are written, at a content-driven frame rate.
        var gate: ContentFrameGate?
        /// Paused, with the encoder's run still to end once every frame before the pause is
        /// appended: where the next frame will go.
        var runEndsAt: MediaTime?
        /// A stop ended the loop (not the limit, nor the source).
        var stopped = false
    }

    /// Ticks of `frameRate` in `maximumFill`, at least one.
    var fillLimit: Int {
        let d = maximumFill.components
        let ns = Int128(d.seconds) * 1_000_000_000 + Int128(d.attoseconds / 1_000_000_000)
        let ticks = ns * Int128(frameRate.numerator) / (Int128(frameRate.denominator) * 1_000_000_000)
        return Int(clamping: max(1, ticks))
    }

    /// One grab per tick of the timeline's grid; see the type's documentation.
    ///
    /// Grabs run on a `GrabWorker`'s thread; while one is outstanding the capture thread
    /// waits for it as it waited for a grab made in place (ticks that close meanwhile show
    /// the picture it brings), but not past the limit's wall-clock end nor a stop: a
    /// source that hangs (a frozen X server) cannot hold the recording beyond either.
    func liveLoop(pool: PixelBufferPool, origin: MediaTime) throws {
        let limit = fillLimit
        var pending = Deque<Held>()
        pending.reserveCapacity(limit + 1)
        var live = LiveState(timeline: SessionTimeline(frameRate: frameRate), pending: pending, fillLimit: limit,
                             gate: contentFrameGate())
        let maxFrames = frameLimit
        let grabs = GrabWorker(source: source) { [pacer] in pacer.wake() }
        defer { grabs.close() }
        live.timeline.start(at: origin)
        while !live.done {
            if let maxFrames, live.timeline.nextFrameIndex >= maxFrames { break }
            let outstanding = grabs.outstandingSince
            // A pause or resume asked for since the last tick (between grabs, as ever).
            let wantPause = self.state.withLock { $0.pauseRequested }
            if outstanding == nil && wantPause && live.timeline.state == .running {
                try handle(live.timeline.pause(at: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
                self.state.withLock { $0.stats.isPaused = true; $0.stats.pauses += 1 }
            } else if outstanding == nil && !wantPause && live.timeline.state == .paused {
                try handle(live.timeline.resume(at: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
                let pausedSeconds = Double(live.timeline.counts.pausedNanoseconds) / 1e9
                self.state.withLock { $0.stats.isPaused = false; $0.stats.pausedSeconds = pausedSeconds }
            }
            if live.done { break }
            // Frames waiting for room go as soon as there is some, oldest first.
            try appendPending(live: &live, origin: origin)
            if !live.pending.isEmpty { watchForRoom() }
            // Paused, and every frame before the pause appended: the encoder writes out what it
            // holds back, so the file and a replay clip saved while paused end at the pause.
            if live.pending.isEmpty, let end = live.runEndsAt {
                live.runEndsAt = nil
                try adaptor.assetWriterInput.endEncoderRun(at: end)
                for track in videoTracks { try track.endEncoderRun(at: end) }
                self.state.withLockNotifying { s in if s.pauseRequested { s.pauseWritten = true } }
            }
            // The grab came back: its picture.
            if let result = grabs.takeResult() {
                let captured: CapturedFrame?
                do {
                    captured = try result.get()
                } catch let e as SwiftRecordError where e.kind == .poolExhausted {
                    // Every capture buffer is still held (by the encoder, or frames waiting
                    // for it): no new picture for this tick, which closes as a repeat of the
                    // last one; no new grab before it closes.
                    live.last = live.lastBeforeGrab
                    live.lastBeforeGrab = nil
                    live.noBufferUntil = live.timeline.nextTickCloseTime.map { $0.convertScale(1_000_000_000, rounding: .up).value }
                    self.state.withLock { $0.stats.framesDropped += 1 }
                    timingLog?.record(frame: nil, presentationTime: nil, captureTime: nil,
                                      hostTime: (clock.now() - origin).seconds, reason: "dropped-no-buffer")
                    continue
                }
                live.lastBeforeGrab = nil
                guard let frame = captured else { break }
                try handle(live.timeline.frameArrived(at: frame.captureTime), captured: frame.pixelBuffer,
                           unchanged: frame.isUnchanged, live: &live, origin: origin, limit: maxFrames)
                continue
            }
            let deadline: Int64?
            if let since = outstanding {
                // Waiting for the grab: until the limit's end (a source stuck past it ends
                // the recording there), or, before the first picture, the start-up bound.
                if live.timeline.counts.captured == 0 {
                    let bound = since + Int64(CaptureSession.firstPictureTimeout.seconds * 1e9)
                    if MonotonicClock.nanoseconds() >= bound { throw noFirstPicture() }
                    deadline = bound
                } else {
                    deadline = maxFrames.flatMap { live.timeline.tickTime(ofFrame: $0) }?.convertScale(1_000_000_000, rounding: .up).value
                }
            } else {
                let tick = live.timeline.nextTickTime.map { $0.convertScale(1_000_000_000, rounding: .up).value }
                deadline = tick.map { max($0, live.noBufferUntil ?? $0) }
            }
            switch pacer.wait(untilNanoseconds: deadline) {
            case .interrupted: live.done = true; live.stopped = true; continue
            case .woken: continue
            case .deadline: break
            }
            if outstanding != nil {
                if live.timeline.counts.captured == 0 { continue }   // the start-up bound, checked above
                // The limit's end passed with the source stuck: the ticks up to it closed
                // without a picture (counted); the recording ends there.
                try handle(live.timeline.advance(to: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
                break
            }
            // The tick: repeat for ticks that closed without a picture, then grab.
            try handle(live.timeline.advance(to: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
            if live.done { break }
            if let maxFrames, live.timeline.nextFrameIndex >= maxFrames { break }
            // Every tick closed so far has its frame: the last picture is needed no more, and
            // letting go of it lets a source reuse its buffer for this grab (an X11 capture then
            // keeps one shared-memory segment busy, not two). A tick closing during the grab
            // shows the new picture.
            live.lastBeforeGrab = live.last
            live.last = nil
            live.noBufferUntil = nil
            grabs.request(from: pool, stall: simulatedStall(before: live.timeline.nextFrameIndex))
        }
        // A grab still out when the recording ends: given until `stopGrace` after it was
        // asked for; a source stuck longer is reported, the ticks it left without a picture
        // up to now (or the limit) counted, the last picture lasting to the end.
        var stuck: Int64?
        if let since = grabs.outstandingSince,
           !grabs.waitForGrab(untilNanoseconds: since + Int64(CaptureSession.stopGrace.seconds * 1e9)) {
            stuck = since
        }
        let stoppedAt = clock.now()
        if let ns = live.timeline.outputClock.outputNanoseconds(atHost: stoppedAt.convertScale(1_000_000_000, rounding: .down).value) {
            self.state.withLock { $0.stopTime = MediaTime(value: ns, timescale: 1_000_000_000) }
        }
        try handle(live.timeline.stop(at: stoppedAt), captured: nil, live: &live, origin: origin, limit: maxFrames)
        // Capture is over: the frames waiting for room may wait for the encoder now.
        while let next = live.pending.popFirst() {
            try adaptor.append(next.buffer, withPresentationTime: next.frame.presentationTime)
            written(next, live: &live, origin: origin)
        }
        let counts = live.timeline.counts
        self.state.withLock { s in
            s.stats.isPaused = false
            s.stats.pausedSeconds = Double(counts.pausedNanoseconds) / 1e9
        }
        if let stuck {
            if live.timeline.counts.captured == 0 { throw live.stopped ? stoppedBeforeFirstPicture() : noFirstPicture() }
            let since = Double(stuck) / 1e9 - origin.seconds
            let (media, missed) = self.state.withLock { ($0.stats.mediaSeconds, $0.stats.ticksMissed) }
            throw SwiftRecordError(.io, operation: source.identifier,
                                   message: String(format: "the source did not return within %.1f s (it stopped answering %.1f s into the recording, %.1f s ago: a frozen display server?); the file ends at its last picture, %.3f s, and the %d ticks after it had none",
                                                   CaptureSession.stopGrace.seconds, since, Double(MonotonicClock.nanoseconds() - stuck) / 1e9, media, missed))
        }
    }

    /// The error for a source that gave no picture within `firstPictureTimeout` of the first grab.
    private func noFirstPicture() -> SwiftRecordError {
        SwiftRecordError(.io, operation: source.identifier,
                         message: "no picture within \(Int(CaptureSession.firstPictureTimeout.seconds)) s of starting (\(source.captureDescription ?? source.identifier)): the source did not answer (a stopped or hung display server, or a camera that sends nothing?)")
    }

    /// The error for a stop (Ctrl-C) that came before the source's first picture: a stop
    /// during start-up, nothing recorded.
    private func stoppedBeforeFirstPicture() -> SwiftRecordError {
        SwiftRecordError(.cancelled, operation: source.identifier,
                         message: "the recording was stopped before \(source.captureDescription ?? source.identifier) sent its first picture; nothing was recorded")
    }

    /// Carries out the timeline's decisions: appends frames (new pictures or repeats of the
    /// last; at a content-driven rate, not the unchanged ones), counts drops, and logs each.
    /// `unchanged`: the source says `captured` is the picture it gave last.
    func handle(_ events: [SessionTimeline.Event], captured: PixelBuffer?, unchanged capturedUnchanged: Bool = false,
                live: inout LiveState, origin: MediaTime, limit maxFrames: Int64?) throws {
        if audio != nil {
            let clock = live.timeline.outputClock
            self.state.withLockNotifying { if $0.outputClock != clock { $0.outputClock = clock } }
        }
        for event in events {
            let host = (clock.now() - origin).seconds
            switch event {
            case .frame(let frame):
                if let maxFrames, frame.index >= maxFrames {
                    live.done = true
                    continue
                }
                if frame.source == .captured { live.last = captured }
                guard let buffer = frame.source == .captured ? captured : live.last ?? captured else {
                    // A tick that closed while the source was stuck in a grab: no picture to
                    // show (counted; the file ends at the last picture).
                    missed(frame, origin: origin)
                    continue
                }
                let unchanged = frame.source == .repeated || capturedUnchanged
                if live.gate?.admits(tick: frame.index, unchanged: unchanged,
                                     encoded: adaptor.assetWriterInput.encodedSampleCount) == false {
                    leftOutUnchanged(tick: frame.index, presentationTime: frame.presentationTime,
                                     captureSeconds: (frame.captureTime - origin).seconds, origin: origin)
                    reached(frame.index + 1, inFile: true)
                    continue
                }
                // Every tick gets its frame: one that finds the encoder's queue full (or
                // frames already waiting) waits in order, up to `fillLimit` ticks.
                try appendPending(live: &live, origin: origin)
                let next = Held(buffer: buffer, frame: frame, unchanged: unchanged)
                if live.pending.isEmpty, try adaptor.appendIfReady(buffer, withPresentationTime: frame.presentationTime) {
                    written(next, live: &live, origin: origin)
                } else {
                    if !live.pending.isEmpty { live.pending[live.pending.count - 1].filled = true }
                    live.pending.append(next)
                    if live.pending.count > live.fillLimit, let gone = live.pending.popFirst() {
                        leftAsGap(gone.frame, origin: origin)
                    }
                }
            case .dropped(let captureTime, let reason):
                self.state.withLock { s in
                    switch reason {
                    case .fasterThanFrameRate: s.stats.framesDroppedEarly += 1
                    case .paused: s.stats.framesDroppedPaused += 1
                    case .notRunning: break
                    }
                }
                timingLog?.record(frame: nil, presentationTime: nil, captureTime: (captureTime - origin).seconds,
                                  hostTime: host, reason: "dropped-\(reason.rawValue)")
            case .paused(_, let next):
                live.runEndsAt = live.timeline.presentationTime(ofFrame: next)
                timingLog?.record(frame: next, presentationTime: live.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "paused")
            case .resumed(_, let next):
                live.runEndsAt = nil
                timingLog?.record(frame: next, presentationTime: live.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "resumed")
            }
        }
    }

    /// `appended` was appended: counted, logged, and told to the content gate.
    func written(_ appended: Held, live: inout LiveState, origin: MediaTime) {
        let frame = appended.frame
        for track in videoTracks { track.frameWritten(at: frame.presentationTime) }
        live.gate?.wrote(tick: frame.index, unchanged: appended.unchanged, appended: adaptor.assetWriterInput.appendedSampleCount)
        reached(frame.index + 1, inFile: true)
        self.state.withLock { s in
            s.stats.framesWritten += 1
            if appended.filled { s.stats.ticksFilled += 1 }
            if frame.source == .captured {
                s.stats.framesCaptured += 1
            } else {
                s.stats.framesRepeated += 1
                s.stats.ticksMissed += 1
            }
        }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: appended.filled ? "filled" : frame.source.rawValue)
    }

    /// The pictures reach at least tick `end` (exclusive); `inFile`: and the file's media
    /// does (a frame written or lengthened, not dropped).
    private func reached(_ end: Int64, inFile: Bool) {
        let media = presentationTime(ofFrame: Int(end)).seconds
        self.state.withLock { s in
            s.endTick = max(s.endTick, end)
            if inFile { s.stats.mediaSeconds = max(s.stats.mediaSeconds, media) }
        }
    }

    /// A tick that waited for room longer than `maximumFill`: it has no frame in the file
    /// (the frame before it lasts longer), counted and logged as a gap.
    func leftAsGap(_ frame: SessionTimeline.Frame, origin: MediaTime) {
        reached(frame.index + 1, inFile: false)
        self.state.withLock { s in
            s.stats.framesDropped += 1
            s.stats.ticksInGaps += 1
        }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: "gap")
    }

    /// A tick with no picture to show (the source stuck in a grab): counted as missed; the
    /// file ends at the last picture before it.
    func missed(_ frame: SessionTimeline.Frame, origin: MediaTime) {
        reached(frame.index + 1, inFile: false)
        self.state.withLock { $0.stats.ticksMissed += 1 }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime, captureTime: nil,
                          hostTime: (clock.now() - origin).seconds, reason: "missed-source-stuck")
    }

    /// The `simulatedSourceStall` hook: once, the grab for frame `index` or later sleeps
    /// first (the tick of the frame itself may close as a repeat, without a grab).
    private func simulatedStall(before index: Int64) -> Duration? {
        self.state.withLock { s in
            guard let stall = s.simulatedSourceStall, index >= stall.frame else { return nil }
            s.simulatedSourceStall = nil
            return stall.duration
        }
    }
}
