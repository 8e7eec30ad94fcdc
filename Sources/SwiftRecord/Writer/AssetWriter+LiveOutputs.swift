import Foundation

/// Several destinations for one writer: besides its file, an `AssetWriter` can stream the
/// same encoded packets to live outputs (RTMP, SRT, HLS). There is one encode; each live
/// output has its own thread and bounded queue, so a slow or lost connection never slows
/// the capture or changes the file.
extension AssetWriter {
    /// The live outputs added, in order.
    public var liveOutputs: [LiveOutput] { live.withLock { $0 } }

    /// Whether `output` can be added now (`canAdd(_:)`): the writer has not started and the
    /// output is not added to a writer.
    public func canAdd(_ output: LiveOutput) -> Bool {
        status == .unknown && output.status == .idle && !liveOutputs.contains { $0 === output }
            && !output.state.withLock { $0.started }
    }

    /// Adds a live output (`add(_:)`): from `startWriting()` on, every packet written to the
    /// file is also sent to it. Throws where `canAdd(_:)` is false, saying why.
    public func add(_ output: LiveOutput) throws(SwiftRecordError) {
        guard status == .unknown else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "live outputs can only be added before startWriting(); the writer is \(status)")
        }
        guard output.claim() else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "the live output \(output.displayName) is already added to a writer")
        }
        live.withLock { $0.append(output) }
    }

    /// Connects every live output (in parallel; each within its `connectTimeout`). If one
    /// fails, the others are closed and the pipeline cancelled (removing the file it
    /// created); the first failure is thrown.
    func startLiveOutputs(_ outputs: [LiveOutput], tracks: [OpenedTrack], pipeline: WritingPipeline) throws(SwiftRecordError) {
        guard !outputs.isEmpty else { return }
        let streams = tracks.map(\.parameters)
        // Per output: nil while connecting, then its outcome.
        let outcomes = Locked([Result<Void, SwiftRecordError>?](repeating: nil, count: outputs.count))
        for (index, output) in outputs.enumerated() {
            Thread.detachNewThread {
                let outcome: Result<Void, SwiftRecordError>
                do throws(SwiftRecordError) { try output.start(streams: streams); outcome = .success(()) } catch { outcome = .failure(error) }
                outcomes.withLockNotifying { $0[index] = outcome }
            }
        }
        let all = outcomes.wait { o in o.contains { $0 == nil } ? nil : o.compactMap { $0 } } ?? []
        let failure = all.lazy.compactMap { if case .failure(let e) = $0 { e } else { nil } }.first
        if let failure {
            for output in outputs { output.cancel() }
            pipeline.cancel()
            throw failure
        }
    }

    /// How long the live outputs may take, from the start of `finishWriting()`, to send
    /// what they still queue: a stalled network is abandoned then, so a stop never waits
    /// on it for longer.
    static let liveFinishSeconds = 1.0

    /// Sends what the live outputs still queue and closes them (by their deadline, see
    /// `liveFinishSeconds`); returns once all are done.
    static func finishLiveOutputs(_ outputs: [LiveOutput]) {
        for output in outputs {
            output.setDeadline(within: liveFinishSeconds)
            output.requestFinish()
        }
        for output in outputs { output.waitUntilDone() }
    }
}
