import Foundation

/// The pipeline's thread: started by `open`, it opens the outputs, takes jobs in order and
/// closes everything on one shut-down path.
extension WritingPipeline {
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
        let phase = pipeline.state.wait(on: QueueCondition.progress) { s -> Phase? in
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

    private func run(_ configuration: PipelineConfiguration) {
        let outputs: PipelineOutputs
        do {
            outputs = try PipelineOutputs(configuration)
        } catch {
            state.withLockNotifying(QueueCondition.progress) { s in s.phase = .closed(error) }
            markDone()
            return
        }
        outputs.audioSync = { [events] track, lane, event, statistics in events(.audioSync(track: track, lane: lane, event, statistics)) }
        state.withLockNotifying(QueueCondition.progress) { s in s.phase = .open(outputs.openedTracks) }
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
        /// Room freed with callbacks waiting for it: run them, then look again.
        case wake(TrackQueue.Wakes)
        case cancel
    }

    /// Takes jobs in order until finish, a failure or cancel. A sample's slot is freed
    /// when its encode is done, in the same hold of the lock that takes the next job, and
    /// the queue's waiters woken if it says so (`TrackQueue.finishEncoding`): the parked
    /// threads in that hold, the callbacks outside it.
    private func work(_ outputs: PipelineOutputs) -> Ending {
        var encoded: Int?   // the track whose sample was just encoded
        while true {
            var wakeBlocked = false
            let next = state.wait(on: QueueCondition.job, untilNanoseconds: outputs.idleFlushDeadline,
                                  notifying: wakeBlocked ? QueueCondition.room : nil) { s -> Next? in
                if let track = encoded {
                    encoded = nil
                    let wakes = s.tracks[track].finishEncoding(encoded: outputs.packetsOut(track: track))
                    wakeBlocked = wakes.blocked
                    if wakes.callbacks != nil { return .wake(wakes) }
                }
                if s.cancelRequested { return .cancel }
                return s.popJob().map(Next.job)
            }
            guard let next else {
                // No packet for a fragment interval: what the file has so far goes to it now.
                do { try outputs.flushIdleFragment() } catch { return .failure(error) }
                continue
            }
            let job: Job
            switch next {
            case .cancel: return .cancel
            case .wake(let wakes):
                wakes.runCallbacks()
                continue
            case .job(let j): job = j
            }
            switch job {
            case .frame(let track, let sample, let ticks):
                encoded = track
                do {
                    try outputs.encode(sample, ticks: ticks, track: track)
                } catch {
                    return .failure(error)
                }
            case .endSession(let ticks):
                outputs.endSession(ticks: ticks)
            case .endRun(let track, let until, let ticket):
                defer { state.withLockNotifying(QueueCondition.progress) { s in s.runEndsDone = max(s.runEndsDone, ticket) } }
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
        // Every condition: the closed phase, and room that will never come.
        let (leftover, wakes, dropped) = state.withLockNotifying { s -> ([Job], [TrackQueue.Wakes], [TrackSample]) in
            s.phase = .closed(reason)
            // Queued samples are let go; whoever waits for room learns that none will come.
            let wakes = s.tracks.indices.map { s.tracks[$0].close(reason) }
            let dropped = s.tracks.indices.flatMap { s.tracks[$0].removeAll() }
            defer { s.controls.removeAll() }
            return (s.controls.map(\.job), wakes, dropped)
        }
        for sample in dropped { sample.release() }
        for w in wakes { w.runCallbacks() }
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

    /// Marks the thread done and runs what waited for it.
    private func markDone() {
        let waiters = state.withLockNotifying(QueueCondition.progress) { s -> [@Sendable () -> Void] in
            s.threadDone = true
            defer { s.doneWaiters.removeAll() }
            return s.doneWaiters
        }
        for w in waiters { w() }
    }
}
