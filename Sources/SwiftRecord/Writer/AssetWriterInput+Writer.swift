import Foundation

/// The writer's side of an input: attached, opened on the pipeline, its session started
/// and ended, closed; and `requestMediaDataWhenReady`'s calls.
extension AssetWriterInput {
    // MARK: - The writer's side

    func attach(to writer: AssetWriter) throws(SwiftRecordError) {
        try state.withLock { s throws(SwiftRecordError) in
            guard s.writer == nil else {
                throw SwiftRecordError(.invalidState, operation: "add", message: "the input is already added to a writer")
            }
            s.writer = writer
        }
    }

    var trackConfiguration: PipelineConfiguration.Track {
        state.withLock { s in
            let resolved: TrackSettings
            switch settings {
            case .video(let v): resolved = .video(v.resolved(realTime: s.realTime))
            case .audio, .passThrough: resolved = settings
            }
            var tags = s.metadata.dictionary
            if let title = s.metadata.title { tags["handler_name"] = title }
            if let language = s.languageCode { tags["language"] = language }
            return PipelineConfiguration.Track(settings: resolved, transform: s.transform, faults: s.faults,
                                               queueDepth: s.effectiveQueueDepth, metadata: tags, mixVolumes: s.mixVolumes)
        }
    }

    /// The writer started: samples go to `track` of `pipeline`.
    func open(pipeline: WritingPipeline, track: Int, timing: OpenedTrack) {
        let route = InputState.Route(pipeline: pipeline, track: track, timing: timing)
        let (requested, finished) = state.withLock { s in
            s.gate = .open(route)
            s.route = route
            return (s.request != nil, s.finished)
        }
        if finished { pipeline.closeTrack(track, reason: AssetWriterInput.markedFinished) }
        if requested { scheduleRequest() }
    }

    func startSession(at time: MediaTime) {
        state.withLock { s in s.sessionStart = time }
    }

    /// Ends the encoder's run after the samples appended so far (a pause): the encoder's
    /// look-ahead is written out now, so the file (and a replay clip saved meanwhile) has
    /// every frame appended, the last lasting until `time` (where the next frame will go);
    /// the next frame starts a new encoder run on a key frame. Only video inputs have a
    /// run to end; nothing happens for audio or before the writer started. Returns once it
    /// is done.
    package func endEncoderRun(at time: MediaTime) throws(SwiftRecordError) {
        guard mediaType == .video else { return }
        // Queued under the input's lock, behind the samples admitted before it; waited for
        // outside it (the pipeline's events take it).
        let asked = try state.withLock { (s) throws(SwiftRecordError) -> (WritingPipeline, Int)? in
            guard case .open(let route) = s.gate, let start = s.sessionStart, time.isNumeric else { return nil }
            let ticket = try route.pipeline.endRun(track: route.track, until: (time - start).ticks(in: route.timing.encoderTimeBase))
            return (route.pipeline, ticket)
        }
        if let (pipeline, ticket) = asked { pipeline.waitForEndedRun(ticket) }
    }

    /// The session ends at `time`; returns it in the encoder's ticks.
    func endSession(at time: MediaTime) -> Int64? {
        state.withLock { s in
            s.sessionEnd = time
            guard case .open(let route) = s.gate, let start = s.sessionStart else { return nil }
            return (time - start).ticks(in: route.timing.encoderTimeBase)
        }
    }

    /// No more samples are taken, for `reason` (the writer failed, finished or was
    /// cancelled). Returns what wakes the appenders waiting for room (they find the
    /// reason), for the caller to run once it holds no lock.
    func close(_ reason: SwiftRecordError) -> (@Sendable () -> Void)? {
        let route = state.withLock { s in
            if case .closed = s.gate {} else { s.gate = .closed(reason) }
            s.request = nil
            return s.route
        }
        guard let route else { return nil }
        return { route.pipeline.closeTrack(route.track, reason: reason) }
    }

    /// The next call of the request's block: once the track's queue has room (at once if it
    /// has some now), as one of the queue's waiters, on the request's queue; after the block
    /// returns, the next. The chain ends when the input is finished or closed, or a newer
    /// block replaces this one.
    func scheduleRequest() {
        let asked = state.withLock { s -> (InputState.Request, InputState.Route)? in
            guard let r = s.request, !s.requestScheduled, let route = s.roomRoute else { return nil }
            s.requestScheduled = true
            return (r, route)
        }
        guard let (request, route) = asked else { return }
        route.pipeline.whenRoom(track: route.track) { [weak self] closed in
            // No room ever again (the queue or the writer closed): the chain ends.
            guard closed == nil else { return }
            request.queue.asyncAfter(deadline: .now() + .microseconds(request.idleDelayMicroseconds)) { [weak self] in
                guard let self else { return }
                let before = self.state.withLock { $0.request?.generation == request.generation ? $0.appended : nil }
                guard let before else { return }
                request.block()
                self.state.withLock { s in
                    guard s.request?.generation == request.generation else { return }
                    s.requestScheduled = false
                    // A block that gave nothing is called again after a pause (1 ms, growing
                    // to 10 ms while it stays idle), not at once: an idle producer must not
                    // keep a core busy. Room is never what it waits for: a full queue wakes
                    // the next call through the track queue's waiters, at once.
                    let idle = s.request.map { $0.idleCalls + 1 } ?? 0
                    s.request?.idleCalls = s.appended == before ? idle : 0
                }
                self.scheduleRequest()
            }
        }
    }
}
