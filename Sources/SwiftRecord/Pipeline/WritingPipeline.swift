internal import CFFmpeg
import DequeModule
import Foundation

/// What a writer asks its pipeline to open.
struct PipelineConfiguration: Sendable {
    struct Track: Sendable {
        let settings: TrackSettings
        let transform: VideoTransform
        let faults: FaultInjection
        /// How many samples the track's queue holds, the one being encoded included.
        let queueDepth: Int
        /// The track's own tags (its title), FFmpeg's key names.
        var metadata: [String: String] = [:]
        /// An audio track mixing several sources: each one's volume (linear), in lane order.
        var mixVolumes: [Double]?
    }
    let url: URL
    /// The file written when `url` is a file URL, checked against the output rule.
    let file: OutputFile?
    let fileType: FileType
    let tracks: [Track]
    let metadata: [String: String]
    let optimizeForNetworkUse: Bool
    let fragments: Muxer.FragmentPlan?
    /// Live outputs and replay buffers: every packet muxed into the file is offered to each.
    var sinks: [any PacketSink] = []
    /// In-memory segments (`AssetWriter(contentType:)`) instead of a file: cut where
    /// `cuts` says on track `track`, each handed to `deliver` on the pipeline's thread.
    struct Segments: Sendable {
        let cuts: SegmentCuts
        let track: Int
        let profile: FileTypeProfile
        let deliver: @Sendable (Data, AssetSegmentType, AssetSegmentReport?) -> Void
    }
    var segments: Segments?
    /// Files the container carries beside the tracks (Matroska's attachments).
    var attachments: [AssetAttachment] = []
}

/// A track as opened: the time base its frames' pts are given in, and the one its
/// container stores (after the header, which may change it: MP4 picks its own, MKV
/// uses milliseconds). Two frames must differ in both to be told apart in the file.
struct OpenedTrack: Sendable {
    let encoderTimeBase: AVRational
    let streamTimeBase: AVRational
    /// The encoder's parameters, for a live output's own container.
    let parameters: StreamParameters
}

/// What the pipeline tells its writer, from the pipeline's thread. (Room in a track's
/// queue is not an event: a freed slot wakes its waiters itself, `TrackQueue`.)
enum PipelineEvent: Sendable {
    /// Writing failed; the file was finalised as far as it could be.
    case failed(SwiftRecordError)
    /// An audio track's synchronisation (of its source `lane`, 0 unless it mixes several):
    /// a correction (or none) and the totals so far.
    case audioSync(track: Int, lane: Int, AudioSyncEvent?, AudioSyncStatistics)
}

/// The writing pipeline: the single serial owner of the track encoders and the output.
/// One thread of its own opens them, then takes jobs in order — samples from the tracks'
/// queues, the session's end, finish — and closes everything on one shut-down path, for
/// a normal finish, a failure and a cancel alike (FFmpeg's transcode.c, with its one
/// `end:` label). Frames travel one way: appended by an input, encoded, muxed.
///
/// Each track has a bounded queue (`TrackQueue`); all of them and the control jobs live
/// under the pipeline's one lock, with a not-empty condition (the pipeline's thread waits
/// on it) and a not-full one (blocked appends wait on it). The encoders and the muxer
/// never leave the pipeline's thread.
final class WritingPipeline: Sendable {
    enum Job {
        /// A sample and its time in the track's ticks.
        case frame(track: Int, sample: TrackSample, ticks: Int64)
        case endSession(ticks: [Int64?])
        /// A track's encoder run ends after the frames queued before (`PipelineOutputs.endRun`).
        case endRun(track: Int, until: Int64?, ticket: Int)
        case finish(@Sendable (Result<Void, SwiftRecordError>) -> Void)
    }

    /// The lock's conditions.
    static let notEmpty = 0
    static let notFull = 1

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

    private let state: Locked<State>
    private let events: @Sendable (PipelineEvent) -> Void
    let url: URL

    private init(url: URL, tracks: [PipelineConfiguration.Track], events: @escaping @Sendable (PipelineEvent) -> Void) {
        self.url = url
        self.events = events
        state = Locked(State(tracks: tracks.map { track in
            let passThrough: Bool
            if case .passThrough = track.settings { passThrough = true } else { passThrough = false }
            return TrackQueue(capacity: track.queueDepth, wakesInBatches: passThrough)
        }), conditions: 2)
    }

    /// Starts the pipeline's thread, which opens the encoders and the output and writes
    /// the header; returns once that is done. Throws why opening failed (nothing is left
    /// open then, and a file the opening created is removed).
    static func open(_ configuration: PipelineConfiguration,
                     events: @escaping @Sendable (PipelineEvent) -> Void) throws(SwiftRecordError) -> (WritingPipeline, [OpenedTrack]) {
        let pipeline = WritingPipeline(url: configuration.url, tracks: configuration.tracks, events: events)
        let thread = Thread { pipeline.run(configuration) }
        thread.name = "swift-record.writer"
        thread.qualityOfService = .userInitiated
        thread.start()
        // (Changes callers wait for — open, closed, done, room — are told on `notFull`.)
        let phase = pipeline.state.wait(on: WritingPipeline.notFull) { s -> Phase? in
            if case .opening = s.phase { return nil }
            return s.phase
        }
        switch phase {
        case .open(let tracks)?: return (pipeline, tracks)
        case .closed(let error)?:
            throw error ?? SwiftRecordError(.invalidState, operation: "startWriting", message: "the output closed while opening")
        case .opening?, nil:
            throw SwiftRecordError(.invalidState, operation: "startWriting", message: "the output did not open")
        }
    }

    // MARK: - Submitting (any thread)

    /// Queues `sample` (a picture: a reference to an appended buffer), at `ticks`, on
    /// `track`'s queue; false (nothing queued) when the queue is full. Throws the reason
    /// when the pipeline no longer takes samples.
    func push(_ sample: TrackSample, ticks: Int64, track: Int) throws(SwiftRecordError) -> Bool {
        try state.withLockNotifying(WritingPipeline.notEmpty) { s throws(SwiftRecordError) -> Bool in
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
    /// or the pipeline closed).
    func waitForRoom(track: Int) -> SwiftRecordError? {
        state.wait(on: WritingPipeline.notFull) { s -> SwiftRecordError?? in
            if let refusal = s.refusal() { return .some(refusal) }
            guard s.tracks.indices.contains(track) else { return .some(WritingPipeline.noTrack(track)) }
            if let closed = s.tracks[track].closed { return .some(closed) }
            return s.tracks[track].hasRoom ? .some(nil) : nil
        } ?? nil
    }

    /// Runs `body` once `track`'s queue has room or closes: at once (on this thread) if
    /// it has room or is closed now, else on the pipeline's thread when a slot frees.
    func whenRoom(track: Int, _ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> (@Sendable () -> Void)? in
            if s.refusal() != nil || !s.tracks.indices.contains(track) { return body }
            return s.tracks[track].whenRoom(body)
        }
        now?()
    }

    /// Calls `handler` (on the pipeline's thread) at every free slot of `track`'s queue
    /// until it is replaced, removed (nil) or the queue closes.
    func setRoomHandler(track: Int, _ handler: (@Sendable () -> Void)?) {
        state.withLock { s in
            if s.tracks.indices.contains(track), s.tracks[track].closed == nil { s.tracks[track].roomHandler = handler }
        }
    }

    /// `track` takes no more samples, for `reason`: whoever waits for room there wakes
    /// (those blocked now, the callbacks at once).
    func closeTrack(_ track: Int, reason: SwiftRecordError) {
        let wakes = state.withLockNotifying(WritingPipeline.notFull) { s -> TrackQueue.Wakes in
            s.tracks.indices.contains(track) ? s.tracks[track].close(reason) : .none
        }
        wakes.callbacks?.forEach { $0() }
    }

    /// The session ends at these ticks (per track; nil leaves a track untrimmed).
    func endSession(ticks: [Int64?]) {
        state.withLockNotifying(WritingPipeline.notEmpty) { s in
            if s.refusal() == nil { s.appendControl(.endSession(ticks: ticks)) }
        }
    }

    /// After the frames queued so far, `track`'s encoder writes out every frame it holds back
    /// and a new one takes over (a pause; see `PipelineOutputs.endRun`). Returns a ticket for
    /// `waitForEndedRun` (which must not be called under a lock the pipeline's events take).
    func endRun(track: Int, until: Int64?) throws(SwiftRecordError) -> Int {
        try state.withLockNotifying(WritingPipeline.notEmpty) { s throws(SwiftRecordError) -> Int in
            if let refusal = s.refusal() { throw refusal }
            s.runEndsAsked += 1
            s.appendControl(.endRun(track: track, until: until, ticket: s.runEndsAsked))
            return s.runEndsAsked
        }
    }

    /// Returns once the run end `ticket` asked for is done (or the pipeline is).
    func waitForEndedRun(_ ticket: Int) {
        _ = state.wait(on: WritingPipeline.notFull) { s in s.runEndsDone >= ticket || s.threadDone ? true : nil }
    }

    /// Flushes the encoders after every queued frame, writes the trailer and closes the
    /// output; `done` runs on the pipeline's thread with the outcome.
    func finish(_ done: @escaping @Sendable (Result<Void, SwiftRecordError>) -> Void) {
        let refusal: SwiftRecordError? = state.withLockNotifying(WritingPipeline.notEmpty) { s in
            if let refusal = s.refusal() { return refusal }
            s.appendControl(.finish(done))
            return nil
        }
        if let refusal { done(.failure(refusal)) }
    }

    /// Stops at once, drops queued frames and removes the output if writing created it.
    /// Returns once the pipeline's thread is done.
    func cancel() {
        state.withLockNotifying(WritingPipeline.notEmpty) { s in s.cancelRequested = true }
        _ = state.wait(on: WritingPipeline.notFull) { s in s.threadDone ? true : nil }
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

    /// Marks the thread done and runs what waited for it.
    private func markDone() {
        let waiters = state.withLockNotifying(WritingPipeline.notFull) { s -> [@Sendable () -> Void] in
            s.threadDone = true
            defer { s.doneWaiters.removeAll() }
            return s.doneWaiters
        }
        for w in waiters { w() }
    }

    // MARK: - The pipeline's thread

    private func run(_ configuration: PipelineConfiguration) {
        let outputs: PipelineOutputs
        do {
            outputs = try PipelineOutputs(configuration)
        } catch {
            state.withLockNotifying(WritingPipeline.notFull) { s in s.phase = .closed(error) }
            markDone()
            return
        }
        outputs.audioSync = { [events] track, lane, event, statistics in events(.audioSync(track: track, lane: lane, event, statistics)) }
        state.withLockNotifying(WritingPipeline.notFull) { s in s.phase = .open(outputs.openedTracks) }
        let ending = work(outputs)
        shutDown(outputs, ending)
    }

    /// How the job loop ended.
    private enum Ending {
        case finish(@Sendable (Result<Void, SwiftRecordError>) -> Void)
        case failure(SwiftRecordError)
        case cancel
    }

    private enum Next {
        case job(Job)
        /// Room freed with someone waiting for it: wake them, then look again.
        case wake(TrackQueue.Wakes)
        case cancel
    }

    /// Takes jobs in order until finish, a failure or cancel. A sample's slot is freed
    /// when its encode is done, in the same hold of the lock that takes the next job.
    private func work(_ outputs: PipelineOutputs) -> Ending {
        var encoded: Int?   // the track whose sample was just encoded
        var batched = false // that track wakes its producer in batches (`TrackQueue.wakesInBatches`)
        let batchedTracks = state.withLock { s in s.tracks.map(\.wakesInBatches) }
        while true {
            var wakeForRoom = false
            let next = state.wait(on: WritingPipeline.notEmpty, untilNanoseconds: outputs.idleFlushDeadline,
                                  notifying: encoded == nil || batched ? nil : WritingPipeline.notFull) { s -> Next? in
                if let track = encoded {
                    encoded = nil
                    let wakes = s.tracks[track].finishEncoding(encoded: outputs.packetsOut(track: track))
                    wakeForRoom = batched && s.tracks[track].wakeForRoom
                    if !wakes.isEmpty { return .wake(wakes) }
                }
                if s.cancelRequested { return .cancel }
                return s.popJob().map(Next.job)
            }
            if wakeForRoom { state.withLockNotifying(WritingPipeline.notFull) { _ in } }
            guard let next else {
                // No packet for a fragment interval: what the file has so far goes to it now.
                do { try outputs.flushIdleFragment() } catch { return .failure(error) }
                continue
            }
            let job: Job
            switch next {
            case .cancel: return .cancel
            case .wake(let wakes):
                wakes.run()
                continue
            case .job(let j): job = j
            }
            switch job {
            case .frame(let track, let sample, let ticks):
                encoded = track
                batched = batchedTracks.indices.contains(track) && batchedTracks[track]
                do {
                    try outputs.encode(sample, ticks: ticks, track: track)
                } catch {
                    return .failure(error)
                }
            case .endSession(let ticks):
                outputs.endSession(ticks: ticks)
            case .endRun(let track, let until, let ticket):
                defer { state.withLockNotifying(WritingPipeline.notFull) { s in s.runEndsDone = max(s.runEndsDone, ticket) } }
                do { try outputs.endRun(track: track, until: until) } catch { return .failure(error) }
            case .finish(let done):
                return .finish(done)
            }
        }
    }

    /// The one shut-down path: refuse further jobs, let go of queued frames, close the
    /// output the way the ending asks (flushed with its index, finalised as far as it can
    /// be after a failure, removed on cancel), then report.
    private func shutDown(_ outputs: PipelineOutputs, _ ending: Ending) {
        var failure: SwiftRecordError?
        var done: (@Sendable (Result<Void, SwiftRecordError>) -> Void)?
        var cancelled = false
        var empty = false
        switch ending {
        case .finish(let d):
            done = d
            do { try outputs.flushEncoders() } catch { failure = error }
            if failure == nil && outputs.packetsWritten == 0 {
                // A header and no media is not a file anyone can play: fail, and remove it below.
                failure = WritingPipeline.nothingWrittenError
                empty = true
            }
        case .failure(let error): failure = error
        case .cancel: cancelled = true
        }
        let reason = cancelled ? WritingPipeline.cancelledError : failure ?? WritingPipeline.finishedError
        // The writer learns of a failure before appends are refused here, so that every
        // append that fails from now on fails with the writer's own error.
        if let failure { events(.failed(failure)) }
        let (leftover, wakes, dropped) = state.withLockNotifying(WritingPipeline.notFull) { s -> ([Job], [TrackQueue.Wakes], [TrackSample]) in
            s.phase = .closed(reason)
            // Queued samples are let go; whoever waits for room learns that none will come.
            let wakes = s.tracks.indices.map { s.tracks[$0].close(reason) }
            let dropped = s.tracks.indices.flatMap { s.tracks[$0].removeAll() }
            defer { s.controls.removeAll() }
            return (s.controls.map(\.job), wakes, dropped)
        }
        for sample in dropped { sample.release() }
        for w in wakes { w.callbacks?.forEach { $0() } }
        for case .finish(let later) in leftover { later(.failure(reason)) }
        if cancelled || empty {
            outputs.discard()
        } else {
            do {
                try outputs.close(complete: failure == nil)
            } catch {
                if failure == nil {
                    failure = error
                    events(.failed(error))
                }
            }
        }
        markDone()
        done?(failure.map { .failure($0) } ?? .success(()))
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
