import Foundation

/// The pipeline's events, failing, finishing and cancelling.
extension AssetWriter {
    /// What the pipeline reports, on its thread.
    func handle(_ event: PipelineEvent) {
        switch event {
        case .failed(let error):
            fail(error)
            // The file failed; the streams end too (not on this thread: the file closes first).
            let outputs = live.withLock { $0.outputs }
            if !outputs.isEmpty { Thread.detachNewThread { AssetWriter.finishLiveOutputs(outputs) } }
        case .audioSync(let track, let lane, let event, let statistics):
            if let input = state.withLock({ s in s.inputs.indices.contains(track) ? s.inputs[track] : nil }) {
                input.audioSync(event, statistics, lane: lane)
            }
        }
    }

    /// Moves to `.failed` (unless already finished or cancelled) and closes every input,
    /// both under the writer's lock: whoever sees `.failed` finds the inputs closed too.
    func fail(_ error: SwiftRecordError) {
        let wakes = state.withLock { s in
            if s.status == .writing || s.status == .unknown {
                s.status = .failed
                s.error = error
            }
            let reason = s.error ?? error
            return s.inputs.compactMap { $0.close(reason) }
        }
        for w in wakes { w() }
    }

    /// Marks every input finished, flushes the encoders, writes the trailer and closes
    /// the file (`finishWriting(completionHandler:)`, as `async throws`). Throws the
    /// writer's error if it failed; the file then holds what was written before the failure.
    /// With no sample written (none appended, or none inside the session) there is nothing
    /// to play: the writer fails (`.invalidState`) and removes the file it created. An input
    /// that received no sample while others did is named in a warning (`swift-record.writer`).
    public func finishWriting() async throws(SwiftRecordError) {
        let result: Result<Void, SwiftRecordError> = await withCheckedContinuation { c in
            finish { c.resume(returning: $0) }
        }
        try result.get()
    }

    /// The completion-handler form of `finishWriting()`; check `status` and `error` in the handler.
    public func finishWriting(completionHandler: @escaping @Sendable () -> Void) {
        finish { _ in completionHandler() }
    }

    func finish(_ done: @escaping @Sendable (Result<Void, SwiftRecordError>) -> Void) {
        let started: (WritingPipeline, [AssetWriterInput])
        // After a failure the pipeline is still closing the file (it learns of the failure
        // first): the error is reported once the file is as it stays.
        var closing: WritingPipeline?
        do {
            started = try state.withLock { s throws(SwiftRecordError) in
                switch s.status {
                case .writing where !s.finishing: break
                case .failed:
                    closing = s.pipeline
                    throw s.error ?? SwiftRecordError(.invalidState, operation: "finishWriting", message: "the writer has failed")
                default:
                    throw SwiftRecordError(.invalidState, operation: "finishWriting",
                                           message: s.finishing ? "finishWriting() was already called" : "the writer is \(s.status); call startWriting() first")
                }
                guard let pipeline = s.pipeline else {
                    throw SwiftRecordError(.invalidState, operation: "finishWriting", message: "the writer has no open output")
                }
                s.finishing = true
                return (pipeline, s.inputs)
            }
        } catch {
            if let closing { closing.whenDone { done(.failure(error)) } } else { done(.failure(error)) }
            return
        }
        for (index, input) in started.1.enumerated() where input.appendedSampleCount == 0 {
            Log.writer.warning("finishing with \(input.logName(index: index, of: started.1.count)), which received no sample: its track is written empty or left out")
        }
        for input in started.1 { input.markAsFinished() }
        let outputs = live.withLock { $0.outputs }
        started.0.finish { [weak self] result in
            // The file is closed; the live outputs were told to finish once the encoders were
            // drained (`PacketSink.endOfStream`): wait for them (bounded by their deadline).
            AssetWriter.finishLiveOutputs(outputs)
            if let self, case .success = result {
                self.state.withLock { s in if s.status == .writing { s.status = .completed } }
                for input in started.1 { input.close(WritingPipeline.finishedError)?() }
            }
            // A failure reached `handle(.failed)` first; report the writer's error.
            done(result.mapError { self?.error ?? $0 })
        }
    }

    /// Stops writing and deletes the output file if writing created it (`cancelWriting()`).
    public func cancelWriting() {
        let (inputs, pipeline): ([AssetWriterInput], WritingPipeline?) = state.withLock { s in
            guard s.status == .writing || s.status == .unknown else { return ([], nil) }
            s.status = .cancelled
            return (s.inputs, s.pipeline)
        }
        for input in inputs { input.close(WritingPipeline.cancelledError)?() }
        pipeline?.cancel()
        for output in live.withLock({ $0.outputs }) { output.cancel() }
    }
}
