internal import CFFmpeg
import Foundation

/// What a writer asks its pipeline to open.
struct PipelineConfiguration: Sendable {
    struct Track: Sendable {
        let settings: TrackSettings
        let transform: VideoTransform
        let faults: FaultInjection
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

/// What the pipeline tells its writer, from the pipeline's thread.
enum PipelineEvent: Sendable {
    /// A frame of this track left the queue (encoded, or discarded on shut-down): room for
    /// another; `encoded`: the packets the track's encoder has given out so far.
    case consumed(track: Int, encoded: Int?)
    /// Writing failed; the file was finalised as far as it could be.
    case failed(SwiftRecordError)
    /// An audio track's synchronisation: a correction (or none) and the totals so far.
    case audioSync(track: Int, AudioSyncEvent?, AudioSyncStatistics)
}

/// What an input queues for its track: a reference to an appended picture (its storage
/// shared, not copied), or PCM samples (and whether samples were lost before them).
enum TrackSample: Sendable {
    case picture(PixelBuffer)
    case audio(AudioSampleBuffer, followsGap: Bool)
}

/// The writing pipeline: the single serial owner of the track encoders and the output.
/// One thread of its own opens them, then takes jobs in order — frames to encode and
/// mux, the session's end, finish — and closes everything on one shut-down path, for
/// a normal finish, a failure and a cancel alike (FFmpeg's transcode.c, with its one
/// `end:` label). Frames travel one way: appended by an input, encoded, muxed.
///
/// Callers on any thread submit jobs through `Locked` state; the encoders and the muxer
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

    enum Phase {
        case opening
        case open([OpenedTrack])
        /// Closed, with the reason appends are refused (nil after a normal finish).
        case closed(SwiftRecordError?)
    }

    struct State {
        var phase = Phase.opening
        /// Queued jobs, oldest first. Short (each input's `queueDepth` bounds its frames),
        /// and a taken job leaves it at once: a queued picture is let go when encoded.
        var jobs: [Job] = []
        var cancelRequested = false
        /// Encoder runs asked to end (`endRun`), and how many of them the thread has ended.
        var runEndsAsked = 0
        var runEndsDone = 0
        var threadDone = false
        /// Run once the thread is done (`whenDone`).
        var doneWaiters: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())
    private let events: @Sendable (PipelineEvent) -> Void
    let url: URL

    private init(url: URL, events: @escaping @Sendable (PipelineEvent) -> Void) {
        self.url = url
        self.events = events
    }

    /// Starts the pipeline's thread, which opens the encoders and the output and writes
    /// the header; returns once that is done. Throws why opening failed (nothing is left
    /// open then, and a file the opening created is removed).
    static func open(_ configuration: PipelineConfiguration,
                     events: @escaping @Sendable (PipelineEvent) -> Void) throws(SwiftRecordError) -> (WritingPipeline, [OpenedTrack]) {
        let pipeline = WritingPipeline(url: configuration.url, events: events)
        let thread = Thread { pipeline.run(configuration) }
        thread.name = "swift-record.writer"
        thread.qualityOfService = .userInitiated
        thread.start()
        let phase = pipeline.state.wait { s -> Phase? in
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

    /// Queues `sample` (a picture: a reference to an appended buffer,
    /// `PixelBuffer.makeReference()`), at `ticks`, for `track`. Throws the reason when the
    /// pipeline no longer takes samples.
    func submit(_ sample: TrackSample, ticks: Int64, track: Int) throws(SwiftRecordError) {
        try state.withLockNotifying { s throws(SwiftRecordError) in
            if let refusal = s.refusal() { throw refusal }
            s.jobs.append(.frame(track: track, sample: sample, ticks: ticks))
        }
    }

    /// The session ends at these ticks (per track; nil leaves a track untrimmed).
    func endSession(ticks: [Int64?]) {
        state.withLockNotifying { s in
            if s.refusal() == nil { s.jobs.append(.endSession(ticks: ticks)) }
        }
    }

    /// After the frames queued so far, `track`'s encoder writes out every frame it holds back
    /// and a new one takes over (a pause; see `PipelineOutputs.endRun`). Returns a ticket for
    /// `waitForEndedRun` (which must not be called under a lock the pipeline's events take).
    func endRun(track: Int, until: Int64?) throws(SwiftRecordError) -> Int {
        try state.withLockNotifying { s throws(SwiftRecordError) -> Int in
            if let refusal = s.refusal() { throw refusal }
            s.runEndsAsked += 1
            s.jobs.append(.endRun(track: track, until: until, ticket: s.runEndsAsked))
            return s.runEndsAsked
        }
    }

    /// Returns once the run end `ticket` asked for is done (or the pipeline is).
    func waitForEndedRun(_ ticket: Int) {
        _ = state.wait { s in s.runEndsDone >= ticket || s.threadDone ? true : nil }
    }

    /// Flushes the encoders after every queued frame, writes the trailer and closes the
    /// output; `done` runs on the pipeline's thread with the outcome.
    func finish(_ done: @escaping @Sendable (Result<Void, SwiftRecordError>) -> Void) {
        let refusal: SwiftRecordError? = state.withLockNotifying { s in
            if let refusal = s.refusal() { return refusal }
            s.jobs.append(.finish(done))
            return nil
        }
        if let refusal { done(.failure(refusal)) }
    }

    /// Stops at once, drops queued frames and removes the output if writing created it.
    /// Returns once the pipeline's thread is done.
    func cancel() {
        state.withLockNotifying { s in s.cancelRequested = true }
        _ = state.wait { s in s.threadDone ? true : nil }
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
        let waiters = state.withLockNotifying { s -> [@Sendable () -> Void] in
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
            state.withLockNotifying { s in s.phase = .closed(error) }
            markDone()
            return
        }
        outputs.audioSync = { [events] track, event, statistics in events(.audioSync(track: track, event, statistics)) }
        state.withLockNotifying { s in s.phase = .open(outputs.openedTracks) }
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
        case cancel
    }

    /// Takes jobs in order until finish, a failure or cancel.
    private func work(_ outputs: PipelineOutputs) -> Ending {
        while true {
            let next = state.wait(untilNanoseconds: outputs.idleFlushDeadline) { s -> Next? in
                if s.cancelRequested { return .cancel }
                return s.popJob().map(Next.job)
            }
            guard let next else {
                // No packet for a fragment interval: what the file has so far goes to it now.
                do { try outputs.flushIdleFragment() } catch { return .failure(error) }
                continue
            }
            guard case .job(let job) = next else { return .cancel }
            switch job {
            case .frame(let track, let sample, let ticks):
                defer { events(.consumed(track: track, encoded: outputs.packetsOut(track: track))) }
                do {
                    try outputs.encode(sample, ticks: ticks, track: track)
                } catch {
                    return .failure(error)
                }
            case .endSession(let ticks):
                outputs.endSession(ticks: ticks)
            case .endRun(let track, let until, let ticket):
                defer { state.withLockNotifying { s in s.runEndsDone = max(s.runEndsDone, ticket) } }
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
        let leftover: [Job] = state.withLockNotifying { s in
            s.phase = .closed(reason)
            defer { s.jobs.removeAll() }
            return s.jobs
        }
        for job in leftover {
            switch job {
            case .frame(let track, _, _): events(.consumed(track: track, encoded: nil))
            case .finish(let later): later(.failure(reason))
            case .endSession, .endRun: break
            }
        }
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

extension WritingPipeline.State {
    /// Why a new job is refused, or nil while the pipeline takes jobs.
    func refusal() -> SwiftRecordError? {
        switch phase {
        case .open: return cancelRequested ? WritingPipeline.cancelledError : nil
        case .opening: return SwiftRecordError(.invalidState, operation: "append", message: "the output is not open yet")
        case .closed(let reason): return reason ?? WritingPipeline.finishedError
        }
    }

    mutating func popJob() -> WritingPipeline.Job? {
        jobs.isEmpty ? nil : jobs.removeFirst()
    }
}
