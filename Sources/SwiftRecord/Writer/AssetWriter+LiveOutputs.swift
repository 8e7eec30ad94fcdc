import Foundation

/// Several destinations for one writer: besides its file, an `AssetWriter` can stream the
/// same encoded packets to live outputs (RTMP, SRT, HLS). There is one encode; each live
/// output has its own thread and bounded queue, so a slow or lost connection never slows
/// the capture or changes the file.
extension AssetWriter {
    /// What a writer feeds besides its file.
    struct Destinations {
        var outputs: [LiveOutput] = []
        var replayBuffers: [ReplayBuffer] = []
        var sinks: [any PacketSink] { outputs + replayBuffers }
    }

    /// The live outputs added, in order.
    public var liveOutputs: [LiveOutput] { live.withLock { $0.outputs } }
    /// The replay buffers added.
    public var replayBuffers: [ReplayBuffer] { live.withLock { $0.replayBuffers } }

    /// Whether `output` can be added now (`canAdd(_:)`): the writer has not started and the
    /// output is not added to a writer.
    public func canAdd(_ output: LiveOutput) -> Bool {
        status == .unknown && output.status == .idle && !liveOutputs.contains { $0 === output }
            && !output.state.withLock { $0.started }
    }

    /// Adds a live output (`add(_:)`): from `startWriting()` on, every packet written to the
    /// file is also sent to it. Throws where `canAdd(_:)` is false, saying why.
    public func add(_ output: LiveOutput) throws(SwiftRecordError) {
        try admit("live output \(output.displayName)", claim: output.claim)
        live.withLock { $0.outputs.append(output) }
    }

    /// Adds a replay buffer (`add(_:)`): from `startWriting()` on it keeps the last
    /// `duration` of what is written, to save with `ReplayBuffer.save(to:)`.
    public func add(_ buffer: ReplayBuffer) throws(SwiftRecordError) {
        try admit("replay buffer", claim: buffer.claim)
        live.withLock { $0.replayBuffers.append(buffer) }
    }

    /// Throws unless the writer has not started and `claim` takes the destination for it.
    private func admit(_ what: String, claim: () -> Bool) throws(SwiftRecordError) {
        guard status == .unknown else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "a \(what) can only be added before startWriting(); the writer is \(status)")
        }
        guard claim() else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "the \(what) is already added to a writer")
        }
    }

    /// Gives the replay buffers the streams and connects the live outputs.
    /// `offline`: no input expects data in real time, so live outputs wait for room rather
    /// than drop (an HLS playlist of a conversion keeps every frame).
    func startDestinations(tracks: [OpenedTrack], pipeline: WritingPipeline, offline: Bool) throws(SwiftRecordError) {
        let (outputs, buffers) = live.withLock { ($0.outputs, $0.replayBuffers) }
        for buffer in buffers { buffer.start(streams: tracks.map(\.parameters)) }
        try startLiveOutputs(outputs, tracks: tracks, pipeline: pipeline, offline: offline)
    }

    /// Connects every live output (in parallel; each within its `connectTimeout`). If one
    /// fails, the others are closed and the pipeline cancelled (removing the file it
    /// created); the first failure is thrown.
    func startLiveOutputs(_ outputs: [LiveOutput], tracks: [OpenedTrack], pipeline: WritingPipeline, offline: Bool = false) throws(SwiftRecordError) {
        guard !outputs.isEmpty else { return }
        let streams = tracks.map(\.parameters)
        // Per output: nil while connecting, then its outcome.
        let outcomes = Locked([Result<Void, SwiftRecordError>?](repeating: nil, count: outputs.count))
        for (index, output) in outputs.enumerated() {
            Thread.detachNewThread {
                let outcome: Result<Void, SwiftRecordError>
                do throws(SwiftRecordError) { try output.start(streams: streams, waitsForRoom: offline); outcome = .success(()) } catch { outcome = .failure(error) }
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

    /// Sends what the live outputs still queue and closes them (by their deadline, see
    /// `LiveOutput.finishSeconds`); returns once all are done.
    static func finishLiveOutputs(_ outputs: [LiveOutput]) {
        for output in outputs {
            output.setDeadline(within: LiveOutput.finishSeconds)
            output.requestFinish()
        }
        for output in outputs { output.waitUntilDone() }
    }
}
