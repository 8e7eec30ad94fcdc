import Dispatch

/// One track of an `AssetWriter`: takes pictures (a video input) or PCM samples (an
/// audio input) with presentation times and queues them for the writer's pipeline,
/// which encodes them with the codec its settings name and muxes the packets.
///
/// Appends are queued (`queueDepth` samples deep), so a capture thread never waits for
/// the encoder. `isReadyForMoreMediaData` is false while the queue is full: a real-time
/// source should then drop the frame; the synchronous `append` waits for room, the
/// `async` one suspends, `waitUntilReadyForMoreMediaData()` waits without appending, and
/// `requestMediaDataWhenReady` calls its block again once there is room. Every one of these
/// waits is a waiter of the track's queue (`TrackQueue`), woken by the slot the encoder frees.
///
/// The counterpart of `AVAssetWriterInput` on Apple platforms.
public final class AssetWriterInput: Sendable {
    /// Whether the input takes pictures or sound (`mediaType`).
    public let mediaType: MediaType
    let settings: TrackSettings

    /// Queue depth for a live source: deep enough to absorb one slow encode, shallow enough
    /// that a lagging encoder shows within ~100 ms at 30 fps.
    public static let realTimeQueueDepth = 3
    /// Queue depth otherwise: keeps the encoder busy while the producer prepares the next frames.
    public static let offlineQueueDepth = 6
    /// Queue depth of an audio input: audio buffers are small and must not be lost, so a
    /// live source's buffers (10–20 ms each) may wait for a slow video frame ahead of them.
    public static let audioQueueDepth = 64

    let state: Locked<InputState>

    /// A video input with typed settings (`init(mediaType:outputSettings:)`). The settings'
    /// type decides the media type; `mediaType` is there for Apple's spelling.
    public init(mediaType: MediaType = .video, outputSettings: VideoSettings) {
        self.mediaType = .video
        settings = .video(outputSettings)
        state = Locked(InputState())
    }

    /// An audio input (`AVAssetWriterInput(mediaType: .audio, outputSettings:)`): AAC or
    /// Opus at the settings' rate, layout and bit rate. Append `AudioSampleBuffer`s in
    /// any PCM format; times are honoured to the sample (see `audioSyncStatistics`).
    public init(mediaType: MediaType = .audio, outputSettings: AudioSettings) {
        self.mediaType = .audio
        settings = .audio(outputSettings)
        state = Locked(InputState(isAudio: true))
    }

    /// A pass-through input (`outputSettings: nil`): compressed samples of `format` are
    /// muxed as they come, not decoded or encoded (see `init(mediaType:outputSettings:sourceFormatHint:)`).
    init(passingThrough format: FormatDescription) {
        mediaType = format.mediaType
        settings = .passThrough(format)
        state = Locked(InputState(isAudio: format.mediaType == .audio))
    }

    /// The format a pass-through input carries (`sourceFormatHint`); nil for an input that encodes.
    public var sourceFormatHint: FormatDescription? {
        if case .passThrough(let f) = settings { return f }
        return nil
    }

    /// A video input's settings; nil for an audio input.
    public var videoSettings: VideoSettings? {
        if case .video(let v) = settings { return v }
        return nil
    }

    /// Tune for a live source (`expectsMediaDataInRealTime`): a shorter queue, so lateness
    /// shows at once as `isReadyForMoreMediaData == false`, and, when the settings name no
    /// preset, an encoder configuration that keeps up in real time
    /// (`VideoSettings.realTimeDefaultPreset`, `veryfast`). Set before `startWriting()`.
    public var expectsMediaDataInRealTime: Bool {
        get { state[\.realTime] }
        set { state[\.realTime] = newValue }
    }

    /// How the track is shown (`transform`, a `CGAffineTransform` on Apple platforms): a
    /// quarter turn, a mirror or both, written as the MP4/MOV display matrix; Matroska and
    /// WebM have none, so the pictures are turned or mirrored before encoding instead (a
    /// pass-through input cannot be, and is refused). Any other transform is refused by
    /// `startWriting()`. See ``VideoTransform``. Set before `startWriting()`.
    public var transform: VideoTransform {
        get { state[\.transform] }
        set { state[\.transform] = newValue }
    }

    /// The track's own tags, set before `startWriting()` (`AVAssetWriterInput.metadata`):
    /// its `title` names the track ("Desktop", "Microphone") in players and editors —
    /// written as the stream's title and, in MP4 and MOV, its handler name (in MOV, a
    /// Pascal string, at most its first 127 bytes, a warning logged when it is cut).
    public var metadata: AssetMetadata {
        get { state[\.metadata] }
        set { state[\.metadata] = newValue }
    }

    /// How many appended samples may wait for the encoder before `isReadyForMoreMediaData`
    /// turns false: `realTimeQueueDepth` when `expectsMediaDataInRealTime`, else
    /// `offlineQueueDepth`, unless set (at least 1). Set before `startWriting()`.
    public var queueDepth: Int {
        get { state[\.effectiveQueueDepth] }
        set { state.withLock { $0.queueDepthSetting = max(1, newValue) } }
    }

    /// Samples dropped because their time was before the session start or at/after its end.
    public var droppedSampleCount: Int { state[\.dropped] }
    /// Samples accepted for encoding.
    public var appendedSampleCount: Int { state[\.appended] }
    /// Samples the encoder has given out as packets; behind `appendedSampleCount` by the
    /// queue and by the encoder's own delay (its look-ahead).
    public var encodedSampleCount: Int {
        guard let route = state[\.route] else { return 0 }
        return route.pipeline.encodedCount(track: route.track)
    }

    /// The writer this input was added to.
    var writer: AssetWriter? { state[\.writer] }

    /// Every encode of this track waits this long first (tests: an encoder slower than real time).
    package var simulatedEncodeDelay: Duration? {
        get { state[\.faults.encodeDelay] }
        set { state[\.faults.encodeDelay] = newValue }
    }

    /// The encode of this frame (0-based) fails (tests: a failing encoder).
    package var simulatedEncodeFailureAtFrame: Int? {
        get { state[\.faults.failEncodeAtFrame] }
        set { state[\.faults.failEncodeAtFrame] = newValue }
    }

    /// True while the writer is writing, the input is not finished and its queue has room
    /// (`isReadyForMoreMediaData`).
    public var isReadyForMoreMediaData: Bool {
        guard let route = state[\.roomRoute] else { return false }
        return route.pipeline.hasRoom(track: route.track)
    }

    /// Appends a sample, waiting while the queue is full (`append(_:)`). Throws a
    /// `SwiftRecordError` for a wrong state, a buffer of the wrong size or format, or a
    /// time that does not increase; the writer keeps writing after such a rejection.
    public func append(_ sampleBuffer: SampleBuffer) throws(SwiftRecordError) {
        try enqueue(sampleBuffer.pixelBuffer, at: sampleBuffer.presentationTimeStamp, waiting: true)
    }

    /// Appends a sample, suspending while the queue is full.
    public func append(_ sampleBuffer: SampleBuffer) async throws(SwiftRecordError) {
        try await enqueueSuspending(sampleBuffer.pixelBuffer, at: sampleBuffer.presentationTimeStamp)
    }

    /// Blocks until the input can take a sample (`isReadyForMoreMediaData`), so a producer
    /// fills a buffer only when it can be queued at once. Throws why, when the input will
    /// never take one again (the writer failed, finished or was cancelled; the input was
    /// marked finished).
    public func waitUntilReadyForMoreMediaData() throws(SwiftRecordError) {
        while true {
            let route = try state.withLock { s throws(SwiftRecordError) -> InputState.Route? in
                try s.checkAppendable()
                return s.openRoute
            }
            guard let route else { return }
            // Wakes at the slot the pipeline frees, or when the track closes.
            guard let reason = route.pipeline.waitForRoom(track: route.track) else { return }
            try checkAppendable()
            throw reason
        }
    }

    /// Suspends until the input can take a sample; throws as the blocking form does.
    public func waitUntilReadyForMoreMediaData() async throws(SwiftRecordError) {
        try checkAppendable()
        guard let reason = await suspendUntilRoom() else { return }
        try checkAppendable()
        throw reason
    }

    /// No more samples will come (`markAsFinished()`). The encoder is flushed by `finishWriting()`.
    public func markAsFinished() {
        let route = state.withLock { s in
            s.finished = true
            s.request = nil
            return s.openRoute
        }
        if let route { route.pipeline.closeTrack(route.track, reason: AssetWriterInput.markedFinished) }
    }

    static let markedFinished = SwiftRecordError(.invalidState, operation: "append", message: "the input was marked as finished; nothing more can be appended")

    /// Calls `block` on `queue` whenever the input can take more data, until the input
    /// is marked finished or the writer stops (`requestMediaDataWhenReady(on:using:)`).
    ///
    /// As on Apple platforms, the block should append while `isReadyForMoreMediaData` is
    /// true and it has data, then return; it is called again as long as the input is ready,
    /// whether or not it appended anything: at once when it returned with room left, and
    /// when the queue has room again after it filled it (the encoder's freed slot wakes it:
    /// no polling). A block that returns with nothing to give is called again too, after a
    /// pause of 1 ms growing to 10 ms while it stays idle, so an idle producer costs about
    /// 100 calls a second, not a busy core; a producer whose data comes at its own pace can
    /// also append from its own thread with `waitUntilReadyForMoreMediaData()`.
    /// Setting a new block replaces the old one.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        state.withLock { s in
            s.requestGenerations += 1
            s.request = InputState.Request(queue: queue, block: block, generation: s.requestGenerations)
            s.requestScheduled = false
        }
        scheduleRequest()
    }

    static let notAdded = SwiftRecordError(.invalidState, operation: "append", message: "the input has not been added to an AssetWriter; call writer.add(input) before startWriting()")

    // MARK: - Appending

    /// What became of an append.
    enum Admission { case queued, dropped, full }

    /// Every append path: checks the buffer and the state, drops samples outside the
    /// session, waits for room (or reports `.full`), and hands the picture, pinned,
    /// to the pipeline, without copying it.
    @discardableResult
    func enqueue(_ buffer: PixelBuffer, at time: MediaTime, waiting: Bool) throws(SwiftRecordError) -> Admission {
        guard case .video(let s) = settings else {
            throw SwiftRecordError(.invalidArgument, operation: "append",
                                   message: mediaType == .audio ? "this is an audio input; append AudioSampleBuffers to it, pixel buffers to a video input"
                                   : "this input passes compressed samples through (outputSettings: nil); append CompressedSampleBuffers to it")
        }
        guard buffer.width == s.width, buffer.height == s.height, buffer.pixelFormat == s.pixelFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "append",
                                   message: "pixel buffer is \(buffer.width)x\(buffer.height) \(buffer.pixelFormat); this input encodes \(s.width)x\(s.height) \(s.pixelFormat) (use a PixelBufferAdaptor with sourcePixelBufferAttributes to convert)")
        }
        // The picture is pinned before the lock; the sample is admitted and queued under
        // it, so samples reach the pipeline in the order their times were admitted, however
        // many threads append. A picture not queued is unpinned at once.
        let picture = try buffer.pin()
        let admission: Admission
        do {
            admission = try enqueue(.picture(picture), at: time, waiting: waiting)
        } catch {
            picture.unpin()
            throw error
        }
        if admission != .queued { picture.unpin() }
        return admission
    }

    /// Why the input cannot take a sample, or where its samples go.
    private enum Outcome {
        case admitted(Admission)
        case full(InputState.Route)
    }

    /// Every append path: checks the state, drops samples outside the session, waits for
    /// room (or reports `.full`), and hands the sample to the pipeline.
    func enqueue(_ sample: TrackSample, at time: MediaTime, waiting: Bool) throws(SwiftRecordError) -> Admission {
        if case .audio(let buffer, _, _) = sample {
            guard case .audio = settings else {
                throw SwiftRecordError(.invalidArgument, operation: "append",
                                       message: "this is a video input; append AudioSampleBuffers to an audio input")
            }
            try buffer.format.validate("append")
        }
        if case .compressed(let buffer, _) = sample {
            guard case .passThrough(let format) = settings else {
                throw SwiftRecordError(.invalidArgument, operation: "append",
                                       message: "this input encodes; append compressed samples to a pass-through input (outputSettings: nil, sourceFormatHint:)")
            }
            guard buffer.formatDescription.isSameCodec(as: format) else {
                throw SwiftRecordError(.invalidArgument, operation: "append",
                                       message: "the sample is \(buffer.formatDescription); this pass-through input carries \(format)")
            }
        }
        while true {
            // Admitted and pushed under this input's lock, so samples reach the queue in
            // the order their times were admitted, however many threads append.
            let outcome = try state.withLock { s throws(SwiftRecordError) -> Outcome in
                try s.checkAppendable()
                let admission = try s.admit(time, sample: sample)
                if admission == .full, let route = s.openRoute { return .full(route) }
                return .admitted(admission)
            }
            switch outcome {
            case .admitted(let admission): return admission
            case .full(let route):
                guard waiting else { return .full }
                if let reason = route.pipeline.waitForRoom(track: route.track) {
                    try checkAppendable()
                    throw reason
                }
            }
        }
    }

    /// The async append: suspends (without blocking a thread) while the queue is full.
    func enqueueSuspending(_ buffer: PixelBuffer, at time: MediaTime) async throws(SwiftRecordError) {
        while try enqueue(buffer, at: time, waiting: false) == .full {
            await suspendUntilRoom()
        }
    }

    /// Suspends until the queue has room (nil) or appending is no longer possible (why), at
    /// once if either is so now.
    @discardableResult
    func suspendUntilRoom() async -> SwiftRecordError? {
        await withCheckedContinuation { (c: CheckedContinuation<SwiftRecordError?, Never>) in
            whenReadyForMoreMediaData { c.resume(returning: $0) }
        }
    }

    /// Runs `body` once the queue has room (nil) or the input takes nothing more (why): at
    /// once if so now, else on the writer's thread as the slot frees (a waiter of the
    /// track's queue). For the capture loop's `RoomWatch` (which wakes its pacer), the
    /// suspending appends and waits.
    func whenReadyForMoreMediaData(_ body: @escaping @Sendable (SwiftRecordError?) -> Void) {
        let route: InputState.Route
        do throws(SwiftRecordError) {
            guard let open = try state.withLock({ s throws(SwiftRecordError) in try s.checkAppendable(); return s.openRoute }) else {
                return body(AssetWriterInput.notAdded)
            }
            route = open
        } catch {
            return body(error)
        }
        route.pipeline.whenRoom(track: route.track) { [weak self] closed in
            guard let self else { return body(closed) }
            do throws(SwiftRecordError) { try self.checkAppendable() } catch { return body(error) }
            body(closed)
        }
    }

    /// Throws why appending is not possible now, if it is not (a full queue is no error).
    package func checkAppendable() throws(SwiftRecordError) {
        try state.withLock { s throws(SwiftRecordError) in try s.checkAppendable() }
    }
}
