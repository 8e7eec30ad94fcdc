import DequeModule
import Foundation

/// The writing pipeline: the single serial owner of the track encoders and the output.
/// One thread of its own opens them, then takes jobs in order — samples from the tracks'
/// queues, the session's end, an encoder run's end (a pause), finish — and closes everything on one shut-down path, for
/// a normal finish, a failure and a cancel alike (FFmpeg's transcode.c, with its one
/// `end:` label). Frames travel one way: appended by an input, encoded, muxed.
///
/// Each track has a bounded queue (`TrackQueue`), whose waiters are every wait for room;
/// all the queues and the control jobs live under the pipeline's one lock, with a
/// condition for each kind of waiter (`QueueCondition`). The encoders and the muxer never
/// leave the pipeline's thread.
final class WritingPipeline: Sendable {
    enum Job {
        /// A sample and its time in the track's ticks.
        case frame(track: Int, sample: TrackSample, ticks: Int64)
        case endSession(ticks: [Int64?])
        /// A track's encoder run ends after the frames queued before (`PipelineOutputs.endRun`).
        case endRun(track: Int, until: Int64?, ticket: Int)
        case finish(@Sendable (Result<Void, SwiftRecordError>) -> Void)
    }

    /// The lock's conditions, one per kind of waiter, so each change wakes only those who
    /// wait for it.
    enum QueueCondition: LockCondition {
        /// A job queued or a cancel asked: the pipeline's thread waits for it.
        case job
        /// Room in a track's queue, or the queue closed: appenders blocked on a full queue
        /// (counted in the queue's waiters) wait for it.
        case room
        /// The pipeline opened or closed, an encoder run ended, the thread is done: `open`,
        /// `waitForEndedRun` and `cancel` wait for those.
        case progress
    }

    enum Phase {
        case opening
        case open([OpenedTrack])
        /// Closed, with the reason appends are refused (nil after a normal finish).
        case closed(SwiftRecordError?)
    }

    struct State {
        var phase = Phase.opening
        /// One bounded queue per track.
        var tracks: [TrackQueue]
        /// The session's end, encoder runs' ends and finish, with their place among the
        /// samples (`sequence`).
        var controls: Deque<(sequence: Int64, job: Job)> = []
        var nextSequence: Int64 = 0
        var cancelRequested = false
        /// Encoder runs asked to end (`endRun`), and how many of them the thread has ended.
        var runEndsAsked = 0
        var runEndsDone = 0
        var threadDone = false
        /// Run once the thread is done (`whenDone`).
        var doneWaiters: [@Sendable () -> Void] = []
    }

    /// The queues, the controls and the phase, under the pipeline's one lock.
    let state: Locked<State>
    /// Told from the pipeline's thread (`WritingPipeline+Thread`).
    let events: @Sendable (PipelineEvent) -> Void
    let url: URL

    /// A pipeline whose thread is not started yet: `open` makes one and starts it.
    init(url: URL, tracks: [PipelineConfiguration.Track], events: @escaping @Sendable (PipelineEvent) -> Void) {
        self.url = url
        self.events = events
        state = Locked(State(tracks: tracks.map { track in
            let passThrough: Bool
            if case .passThrough = track.settings { passThrough = true } else { passThrough = false }
            return TrackQueue(capacity: track.queueDepth, passThrough: passThrough)
        }), conditions: QueueCondition.self)
    }

    // MARK: - Submitting (any thread)

    /// Queues `sample` (a picture: the appended buffer, pinned, not copied), at `ticks`, on
    /// `track`'s queue; false (nothing queued) when the queue is full. Throws the reason
    /// when the pipeline no longer takes samples.
    func push(_ sample: TrackSample, ticks: Int64, track: Int) throws(SwiftRecordError) -> Bool {
        try state.withLockNotifying(QueueCondition.job) { s throws(SwiftRecordError) -> Bool in
            if let refusal = s.refusal() { throw refusal }
            guard s.tracks.indices.contains(track) else { throw WritingPipeline.noTrack(track) }
            guard s.tracks[track].push(TrackQueue.Item(sequence: s.nextSequence, sample: sample, ticks: ticks)) else { return false }
            s.nextSequence += 1
            return true
        }
    }

    /// Whether `track`'s queue has room and the pipeline takes samples.
    func hasRoom(track: Int) -> Bool {
        state.withLock { s in s.refusal() == nil && s.tracks.indices.contains(track) && s.tracks[track].hasRoom }
    }

    /// Samples `track`'s encoder has given out as packets.
    func encodedCount(track: Int) -> Int {
        state.withLock { s in s.tracks.indices.contains(track) ? s.tracks[track].encoded : 0 }
    }

    /// Blocks until `track`'s queue has room: nil then; else why it never will (the queue
    /// or the pipeline closed). While it waits, the thread is one of the queue's waiters.
    func waitForRoom(track: Int) -> SwiftRecordError? {
        var waiting = false
        return state.wait(on: QueueCondition.room) { s -> SwiftRecordError?? in
            guard s.tracks.indices.contains(track) else { return .some(WritingPipeline.noTrack(track)) }
            let found = s.tracks[track].blockedWait(&waiting)
            if found != nil, let refusal = s.refusal() { return .some(refusal) }
            return found
        } ?? nil
    }

    /// Runs `body` once `track`'s queue has room or closes, as one of the queue's waiters:
    /// at once (on this thread) if it has room or is closed now, else on the pipeline's
    /// thread at the wake (`TrackQueue.wakeLevel`).
    /// `body` is told nil (there is room) or why there never will be (the queue or the
    /// pipeline closed).
    func whenRoom(track: Int, _ body: @escaping @Sendable (SwiftRecordError?) -> Void) {
        let now = state.withLock { s -> SwiftRecordError?? in
            if let refusal = s.refusal() { return .some(refusal) }
            guard s.tracks.indices.contains(track) else { return .some(WritingPipeline.noTrack(track)) }
            return s.tracks[track].whenRoom(body)
        }
        if let now { body(now) }
    }

    /// `track` takes no more samples, for `reason`: whoever waits for room there wakes
    /// (those blocked now, the callbacks at once).
    func closeTrack(_ track: Int, reason: SwiftRecordError) {
        let wakes = state.withLockNotifying(QueueCondition.room) { s -> TrackQueue.Wakes in
            s.tracks.indices.contains(track) ? s.tracks[track].close(reason) : .none
        }
        wakes.runCallbacks()
    }

    /// The session ends at these ticks (per track; nil leaves a track untrimmed).
    func endSession(ticks: [Int64?]) {
        state.withLockNotifying(QueueCondition.job) { s in
            if s.refusal() == nil { s.appendControl(.endSession(ticks: ticks)) }
        }
    }

    /// After the frames queued so far, `track`'s encoder writes out every frame it holds back
    /// and a new one takes over (a pause; see `PipelineOutputs.endRun`). Returns a ticket for
    /// `waitForEndedRun` (which must not be called under a lock the pipeline's events take).
    func endRun(track: Int, until: Int64?) throws(SwiftRecordError) -> Int {
        try state.withLockNotifying(QueueCondition.job) { s throws(SwiftRecordError) -> Int in
            if let refusal = s.refusal() { throw refusal }
            s.runEndsAsked += 1
            s.appendControl(.endRun(track: track, until: until, ticket: s.runEndsAsked))
            return s.runEndsAsked
        }
    }

    /// Returns once the run end `ticket` asked for is done (or the pipeline is).
    func waitForEndedRun(_ ticket: Int) {
        _ = state.wait(on: QueueCondition.progress) { s in s.runEndsDone >= ticket || s.threadDone ? true : nil }
    }

    /// Flushes the encoders after every queued frame, writes the trailer and closes the
    /// output; `done` runs on the pipeline's thread with the outcome.
    func finish(_ done: @escaping @Sendable (Result<Void, SwiftRecordError>) -> Void) {
        let refusal: SwiftRecordError? = state.withLockNotifying(QueueCondition.job) { s in
            if let refusal = s.refusal() { return refusal }
            s.appendControl(.finish(done))
            return nil
        }
        if let refusal { done(.failure(refusal)) }
    }

    /// Stops at once, drops queued frames and removes the output if writing created it.
    /// Returns once the pipeline's thread is done.
    func cancel() {
        state.withLockNotifying(QueueCondition.job) { s in s.cancelRequested = true }
        _ = state.wait(on: QueueCondition.progress) { s in s.threadDone ? true : nil }
    }

    /// Runs `body` once the pipeline's thread is done (the output closed, kept or removed):
    /// at once if it is, else on that thread.
    func whenDone(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.threadDone { return true }
            s.doneWaiters.append(body)
            return false
        }
        if now { body() }
    }

    static let nothingWrittenError = SwiftRecordError(
        .invalidState, operation: "finishWriting",
        message: "no samples were appended (or none inside the session); nothing was written, and the file this writer created was removed")
    static let cancelledError = SwiftRecordError(.invalidState, operation: "append", message: "the writer is cancelled; nothing more can be appended")
    static let finishedError = SwiftRecordError(.invalidState, operation: "append", message: "the writer is completed; nothing more can be appended")
}

extension WritingPipeline {
    static func noTrack(_ track: Int) -> SwiftRecordError {
        SwiftRecordError(.invalidState, operation: "append", message: "the writer has no track \(track)")
    }
}

extension WritingPipeline.State {
    /// Why a new job is refused, or nil while the pipeline takes jobs.
    func refusal() -> SwiftRecordError? {
        switch phase {
        case .open: return cancelRequested ? WritingPipeline.cancelledError : nil
        case .opening: return SwiftRecordError(.invalidState, operation: "append", message: "the output is not open yet")
        case .closed(let reason): return reason ?? WritingPipeline.finishedError
        }
    }

    mutating func appendControl(_ job: WritingPipeline.Job) {
        controls.append((nextSequence, job))
        nextSequence += 1
    }

    /// The job pushed first among the tracks' oldest samples and the controls. A control
    /// waits for the samples pushed before it to be encoded (their tracks' slots free).
    mutating func popJob() -> WritingPipeline.Job? {
        var best: Int?
        var bestSequence = controls.first?.sequence ?? Int64.max
        for t in tracks.indices {
            if let head = tracks[t].items.first, head.sequence < bestSequence {
                best = t
                bestSequence = head.sequence
            }
        }
        guard let t = best else {
            return controls.popFirst()?.job
        }
        guard let item = tracks[t].take() else { return nil }
        return .frame(track: t, sample: item.sample, ticks: item.ticks)
    }
}
