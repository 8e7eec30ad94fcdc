import Foundation

extension CaptureSession {
    /// A frame that found the encoder's queue full, waiting for room.
    struct Held {
        let buffer: PixelBuffer
        let frame: SessionTimeline.Frame
        let unchanged: Bool
    }

    /// The live loop's state, used only on the capture thread.
    struct LiveState {
        var timeline: SessionTimeline
        /// The picture repeats show: the last one captured and shown.
        var last: PixelBuffer?
        var held: Held?
        var done = false
        /// Which ticks are written, at a content-driven frame rate.
        var gate: ContentFrameGate?
    }

    /// One grab per tick of the timeline's grid; see the type's documentation.
    func liveLoop(pool: PixelBufferPool, origin: MediaTime, roomQueue: DispatchQueue) throws {
        var live = LiveState(timeline: SessionTimeline(frameRate: frameRate), gate: contentFrameGate())
        let maxFrames = frameLimit
        live.timeline.start(at: origin)
        while !live.done {
            if let maxFrames, live.timeline.nextFrameIndex >= maxFrames { break }
            // A pause or resume asked for since the last tick.
            let wantPause = self.state.withLock { $0.pauseRequested }
            if wantPause && live.timeline.state == .running {
                try handle(live.timeline.pause(at: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
                self.state.withLock { $0.stats.isPaused = true; $0.stats.pauses += 1 }
            } else if !wantPause && live.timeline.state == .paused {
                try handle(live.timeline.resume(at: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
                let pausedSeconds = Double(live.timeline.counts.pausedNanoseconds) / 1e9
                self.state.withLock { $0.stats.isPaused = false; $0.stats.pausedSeconds = pausedSeconds }
            }
            if live.done { break }
            // A held frame goes as soon as there is room.
            if let held = live.held, adaptor.assetWriterInput.isReadyForMoreMediaData {
                if try adaptor.appendIfReady(held.buffer, withPresentationTime: held.frame.presentationTime) {
                    live.held = nil
                    written(held, live: &live, origin: origin)
                }
            }
            if live.held != nil { watchForRoom(on: roomQueue) }
            let deadline = live.timeline.nextTickTime.map { $0.convertScale(1_000_000_000, rounding: .up).value }
            switch pacer.wait(untilNanoseconds: deadline) {
            case .interrupted: live.done = true; continue
            case .woken: continue
            case .deadline: break
            }
            // The tick: repeat for ticks that closed without a picture, then grab.
            try handle(live.timeline.advance(to: clock.now()), captured: nil, live: &live, origin: origin, limit: maxFrames)
            if live.done { break }
            if let maxFrames, live.timeline.nextFrameIndex >= maxFrames { break }
            // Every tick closed so far has its frame: the last picture is needed no more, and
            // letting go of it lets a source reuse its buffer for this grab (an X11 capture then
            // keeps one shared-memory segment busy, not two). A tick closing during the grab
            // shows the new picture.
            live.last = nil
            simulateStallIfAsked(before: live.timeline.nextFrameIndex)
            let captured: CapturedFrame?
            do {
                captured = try source.nextFrame(from: pool)
            } catch let e as SwiftRecordError where e.kind == .poolExhausted {
                // Every capture buffer is still held (by the encoder): drop this tick's picture.
                self.state.withLock { $0.stats.framesDropped += 1 }
                timingLog?.record(frame: nil, presentationTime: nil, captureTime: nil,
                                  hostTime: (clock.now() - origin).seconds, reason: "dropped-no-buffer")
                continue
            }
            guard let frame = captured else { break }
            try handle(live.timeline.frameArrived(at: frame.captureTime), captured: frame.pixelBuffer,
                       unchanged: frame.isUnchanged, live: &live, origin: origin, limit: maxFrames)
        }
        let stoppedAt = clock.now()
        if let ns = live.timeline.outputClock.outputNanoseconds(atHost: stoppedAt.convertScale(1_000_000_000, rounding: .down).value) {
            self.state.withLock { $0.stopTime = MediaTime(value: ns, timescale: 1_000_000_000) }
        }
        try handle(live.timeline.stop(at: stoppedAt), captured: nil, live: &live, origin: origin, limit: maxFrames)
        // Capture is over: the held frame may wait for the encoder now.
        if let held = live.held {
            live.held = nil
            try adaptor.append(held.buffer, withPresentationTime: held.frame.presentationTime)
            written(held, live: &live, origin: origin)
        }
        let counts = live.timeline.counts
        self.state.withLock { s in
            s.stats.isPaused = false
            s.stats.pausedSeconds = Double(counts.pausedNanoseconds) / 1e9
        }
    }

    /// Where the wait for room in the encoder's queue stands.
    enum RoomWatch {
        /// None running: the next held frame starts one.
        case idle
        /// A wait is blocked in `waitUntilReadyForMoreMediaData()`.
        case watching
        /// The input takes nothing more (finished, failed or cancelled): no more waits.
        case ended
    }

    /// While a frame is held for room in the encoder's queue: one blocking wait for room on
    /// `queue`, which wakes the capture thread when it ends. Nothing runs while frames go
    /// straight in (no polling between ticks), and once the input will take nothing more,
    /// no further wait starts.
    func watchForRoom(on queue: DispatchQueue) {
        let start = state.withLock { s -> Bool in
            guard case .idle = s.roomWatch else { return false }
            s.roomWatch = .watching
            return true
        }
        guard start else { return }
        let input = adaptor.assetWriterInput
        queue.async { [self] in
            let ready = (try? input.waitUntilReadyForMoreMediaData()) != nil
            state.withLock { $0.roomWatch = ready ? .idle : .ended }
            pacer.wake()
        }
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
                guard let buffer = frame.source == .captured ? captured : live.last ?? captured else { continue }
                let unchanged = frame.source == .repeated || capturedUnchanged
                if live.gate?.admits(tick: frame.index, unchanged: unchanged,
                                     encoded: adaptor.assetWriterInput.encodedSampleCount) == false {
                    leftOutUnchanged(tick: frame.index, presentationTime: frame.presentationTime,
                                     captureSeconds: (frame.captureTime - origin).seconds, origin: origin)
                    reached(frame.index + 1, inFile: true)
                    continue
                }
                if let held = live.held {
                    // A newer frame is here: the held one goes now or never.
                    live.held = nil
                    if try adaptor.appendIfReady(held.buffer, withPresentationTime: held.frame.presentationTime) {
                        written(held, live: &live, origin: origin)
                    } else {
                        droppedBusy(held.frame, origin: origin)
                    }
                }
                let next = Held(buffer: buffer, frame: frame, unchanged: unchanged)
                if try adaptor.appendIfReady(buffer, withPresentationTime: frame.presentationTime) {
                    written(next, live: &live, origin: origin)
                } else {
                    live.held = next
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
                timingLog?.record(frame: next, presentationTime: live.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "paused")
            case .resumed(_, let next):
                timingLog?.record(frame: next, presentationTime: live.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "resumed")
            }
        }
    }

    /// `appended` was appended: counted, logged, and told to the content gate.
    func written(_ appended: Held, live: inout LiveState, origin: MediaTime) {
        let frame = appended.frame
        live.gate?.wrote(tick: frame.index, unchanged: appended.unchanged, appended: adaptor.assetWriterInput.appendedSampleCount)
        reached(frame.index + 1, inFile: true)
        self.state.withLock { s in
            s.stats.framesWritten += 1
            if frame.source == .captured {
                s.stats.framesCaptured += 1
            } else {
                s.stats.framesRepeated += 1
                s.stats.ticksMissed += 1
            }
        }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: frame.source.rawValue)
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

    func droppedBusy(_ frame: SessionTimeline.Frame, origin: MediaTime) {
        reached(frame.index + 1, inFile: false)
        self.state.withLock { $0.stats.framesDropped += 1 }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: "dropped-encoder-busy")
    }

    /// The `simulatedSourceStall` hook: sleeps once, before the first grab for frame `index`
    /// or later (the tick of the frame itself may close as a repeat, without a grab).
    private func simulateStallIfAsked(before index: Int64) {
        let stall: Duration? = self.state.withLock { s in
            guard let stall = s.simulatedSourceStall, index >= stall.frame else { return nil }
            s.simulatedSourceStall = nil
            return stall.duration
        }
        if let stall { Thread.sleep(forTimeInterval: stall.seconds) }
    }
}
