extension LiveScheduler {
    /// Carries out the timeline's decisions: appends frames (new pictures or repeats of the
    /// last; at a content-driven rate, not the unchanged ones), holds those the encoder has
    /// no room for, counts drops, and logs each. `unchanged`: the source says `captured` is
    /// the picture it gave last.
    mutating func handle<E: LiveEffects>(_ events: [SessionTimeline.Event], captured: Picture?, unchanged capturedUnchanged: Bool = false,
                                         now: MediaTime, effects: inout E) throws where E.Picture == Picture {
        for event in events {
            switch event {
            case .frame(let frame):
                if let limit = settings.frameLimit, frame.index >= limit {
                    done = true
                    continue
                }
                if frame.source == .captured { last = captured }
                guard let picture = frame.source == .captured ? captured : last ?? captured else {
                    // A tick that closed while the source was stuck in a grab: no picture to
                    // show (counted; the file ends at the last picture).
                    missed(frame, now: now, effects: &effects)
                    continue
                }
                let unchanged = frame.source == .repeated || capturedUnchanged
                if gate?.admits(tick: frame.index, unchanged: unchanged, encoded: effects.encodedCount) == false {
                    statistics.ticksUnchanged += 1
                    effects.log(entry(frame: frame, captureTime: frame.captureTime, now: now, reason: "unchanged"))
                    reached(frame.index + 1, inFile: true)
                    continue
                }
                // Every tick gets its frame: one that finds the encoder's queue full (or
                // frames already waiting) waits in order, up to `fillLimit` ticks.
                try appendPending(now: now, effects: &effects)
                let next = Held(picture: picture, frame: frame, unchanged: unchanged)
                if pending.isEmpty, try effects.appendIfRoom(picture, at: frame.presentationTime) {
                    written(next, now: now, effects: &effects)
                } else {
                    if !pending.isEmpty { pending[pending.count - 1].filled = true }
                    pending.append(next)
                    if pending.count > settings.fillLimit, let gone = pending.popFirst() {
                        leftAsGap(gone.frame, now: now, effects: &effects)
                    }
                }
            case .dropped(let captureTime, let reason):
                switch reason {
                case .fasterThanFrameRate: statistics.framesDroppedEarly += 1
                case .paused: statistics.framesDroppedPaused += 1
                case .notRunning: break
                }
                effects.log(TimingEntry(frame: nil, presentationTime: nil, captureTime: (captureTime - origin).seconds,
                                        hostTime: (now - origin).seconds, reason: "dropped-\(reason.rawValue)"))
            case .paused(_, let next):
                runEndsAt = timeline.presentationTime(ofFrame: next)
                effects.log(TimingEntry(frame: next, presentationTime: runEndsAt, captureTime: nil,
                                        hostTime: (now - origin).seconds, reason: "paused"))
            case .resumed(_, let next):
                runEndsAt = nil
                effects.log(TimingEntry(frame: next, presentationTime: timeline.presentationTime(ofFrame: next), captureTime: nil,
                                        hostTime: (now - origin).seconds, reason: "resumed"))
            }
        }
    }

    /// Appends waiting frames, oldest first, while the encoder's queue has room.
    mutating func appendPending<E: LiveEffects>(now: MediaTime, effects: inout E) throws where E.Picture == Picture {
        while let next = pending.first {
            guard try effects.appendIfRoom(next.picture, at: next.frame.presentationTime) else { return }
            pending.removeFirst()
            written(next, now: now, effects: &effects)
        }
    }

    /// `appended` was appended: counted, logged, and told to the content gate.
    mutating func written<E: LiveEffects>(_ appended: Held, now: MediaTime, effects: inout E) where E.Picture == Picture {
        let frame = appended.frame
        gate?.wrote(tick: frame.index, unchanged: appended.unchanged, appended: effects.appendedCount)
        reached(frame.index + 1, inFile: true)
        statistics.framesWritten += 1
        if appended.filled { statistics.ticksFilled += 1 }
        if frame.source == .captured {
            statistics.framesCaptured += 1
        } else {
            statistics.framesRepeated += 1
            statistics.ticksMissed += 1
        }
        effects.log(entry(frame: frame, captureTime: frame.captureTime, now: now,
                          reason: appended.filled ? "filled" : frame.source.rawValue))
    }

    /// The pictures reach at least tick `end` (exclusive); `inFile`: and the file's media
    /// does (a frame written or lengthened, not left out).
    private mutating func reached(_ end: Int64, inFile: Bool) {
        endTick = max(endTick, end)
        if inFile { statistics.mediaSeconds = max(statistics.mediaSeconds, timeline.presentationTime(ofFrame: end).seconds) }
    }

    /// A tick that waited for room longer than the fill limit: no frame in the file (the
    /// frame before it lasts longer), counted and logged as a gap.
    private mutating func leftAsGap<E: LiveEffects>(_ frame: SessionTimeline.Frame, now: MediaTime, effects: inout E) {
        reached(frame.index + 1, inFile: false)
        statistics.framesDropped += 1
        statistics.ticksInGaps += 1
        effects.log(entry(frame: frame, captureTime: frame.captureTime, now: now, reason: "gap"))
    }

    /// A tick with no picture to show (the source stuck in a grab): counted as missed; the
    /// file ends at the last picture before it.
    private mutating func missed<E: LiveEffects>(_ frame: SessionTimeline.Frame, now: MediaTime, effects: inout E) {
        reached(frame.index + 1, inFile: false)
        statistics.ticksMissed += 1
        effects.log(entry(frame: frame, captureTime: nil, now: now, reason: "missed-source-stuck"))
    }

    /// The log's line for `frame` (or for no frame), times in seconds since the start.
    func entry(frame: SessionTimeline.Frame?, captureTime: MediaTime?, now: MediaTime, reason: String) -> TimingEntry {
        TimingEntry(frame: frame?.index, presentationTime: frame?.presentationTime,
                    captureTime: captureTime.map { ($0 - origin).seconds }, hostTime: (now - origin).seconds, reason: reason)
    }
}
