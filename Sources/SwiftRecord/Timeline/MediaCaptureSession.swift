import Foundation

/// A capture session shaped like `AVCaptureSession`: inputs (picture sources, sound sources) and outputs (a movie file, data outputs) added to it, then run.
///
/// ```swift
/// let session = MediaCaptureSession(frameRate: Rational(30)!)
/// try session.addInput(CaptureInput(source: screen))
/// try session.addInput(CaptureInput(audioSource: desktop, type: .audioApp))
/// try session.addInput(CaptureInput(audioSource: microphone, type: .audioMic))
/// try session.addOutput(CaptureMovieFileOutput(outputURL: url))
/// try session.startRunning()
/// // …
/// let statistics = try await session.stopRunning()
/// ```
///
/// With a ``CaptureMovieFileOutput`` it builds what a ``CaptureSession`` needs (the writer,
/// one video input and adaptor per picture source, the first the session's pictures and
/// each other one a titled track beside them (``VideoTrackCapture``), one titled audio input
/// per sound source) and runs one:
/// the pictures on a constant-rate timeline, each sound source on a track of its own brought
/// to the pictures' clock. ``CaptureDataOutput``s receive every captured sample with its
/// capture-clock time stamp, beside the file or without one (then the session only paces
/// a live picture source at its frame rate and reads each sound source).
public final class MediaCaptureSession: Sendable {
    /// The pictures' frame rate: the file's, and the pace of a live picture source.
    public let frameRate: Rational
    /// When the session ends by itself (frames or duration); default: only when stopped or
    /// when the picture source ends.
    public let limit: CaptureLimit

    private struct State {
        var inputs: [CaptureInput] = []
        var outputs: [any CaptureOutput] = []
        var running = false
        var stopRequested = false
        /// The session recording the movie file, while it runs.
        var session: CaptureSession?
        /// The sound sources read without a movie file, interrupted by a stop.
        var drained: [any AudioCaptureSource] = []
        /// The picture source read without a movie file, stopped by a stop: its read may wait
        /// for a first picture that never comes (a camera that sends nothing).
        var drainedPictures: (any CaptureSource)?
        /// The run started by `startRunning()`.
        var task: Task<CaptureStatistics?, any Error>?
    }
    private let state = Locked(State())

    public init(frameRate: Rational = Rational(30)!, limit: CaptureLimit = CaptureLimit()) {
        self.frameRate = frameRate
        self.limit = limit
    }

    public var inputs: [CaptureInput] { state[\.inputs] }
    public var outputs: [any CaptureOutput] { state[\.outputs] }
    /// True from `run()` or `startRunning()` until the run ends.
    public var isRunning: Bool { state[\.running] }

    /// Whether `input` can be added: not while running, not twice, one picture source.
    public func canAddInput(_ input: CaptureInput) -> Bool {
        state.withLock { s in MediaCaptureSession.refusal(of: input, in: s) == nil }
    }

    /// Adds `input`; throws, saying why, when ``canAddInput(_:)`` is false.
    public func addInput(_ input: CaptureInput) throws(SwiftRecordError) {
        let refusal = state.withLock { s -> String? in
            if let why = MediaCaptureSession.refusal(of: input, in: s) { return why }
            s.inputs.append(input)
            return nil
        }
        if let refusal { throw SwiftRecordError(.invalidState, operation: "addInput", message: refusal) }
    }

    /// Removes `input` (not while running).
    public func removeInput(_ input: CaptureInput) {
        state.withLock { s in
            guard !s.running else { return }
            s.inputs.removeAll { $0 === input }
        }
    }

    /// Whether `output` can be added: not while running, not twice, one movie file.
    public func canAddOutput(_ output: any CaptureOutput) -> Bool {
        state.withLock { s in MediaCaptureSession.refusal(of: output, in: s) == nil }
    }

    /// Adds `output`; throws, saying why, when ``canAddOutput(_:)`` is false.
    public func addOutput(_ output: any CaptureOutput) throws(SwiftRecordError) {
        let refusal = state.withLock { s -> String? in
            if let why = MediaCaptureSession.refusal(of: output, in: s) { return why }
            s.outputs.append(output)
            return nil
        }
        if let refusal { throw SwiftRecordError(.invalidState, operation: "addOutput", message: refusal) }
    }

    /// Removes `output` (not while running).
    public func removeOutput(_ output: any CaptureOutput) {
        state.withLock { s in
            guard !s.running else { return }
            s.outputs.removeAll { $0 === output }
        }
    }

    private static func refusal(of input: CaptureInput, in s: State) -> String? {
        if s.running { return "the session is running; add inputs before it starts" }
        if s.inputs.contains(where: { $0 === input }) { return "this input was added already" }

        return nil
    }

    private static func refusal(of output: any CaptureOutput, in s: State) -> String? {
        if s.running { return "the session is running; add outputs before it starts" }
        if s.outputs.contains(where: { $0 === output }) { return "this output was added already" }
        if output is CaptureMovieFileOutput, s.outputs.contains(where: { $0 is CaptureMovieFileOutput }) {
            return "the session has a movie file output already; one per session"
        }
        return nil
    }

    /// Runs until the limit, the picture source's end or ``stop()``; returns the movie
    /// file's statistics (nil without one), the file finished.
    public func run() async throws -> CaptureStatistics? {
        try await run(try claim())
    }

    /// Marks the session running (a stop from now on ends the run); its inputs and outputs.
    private func claim() throws(SwiftRecordError) -> ([CaptureInput], [any CaptureOutput]) {
        try state.withLock { s throws(SwiftRecordError) -> ([CaptureInput], [any CaptureOutput]) in
            guard !s.running else { throw SwiftRecordError(.invalidState, operation: "run", message: "the session is running already") }
            s.running = true
            s.stopRequested = false
            return (s.inputs, s.outputs)
        }
    }

    private func run(_ claimed: ([CaptureInput], [any CaptureOutput])) async throws -> CaptureStatistics? {
        let (inputs, outputs) = claimed
        defer { state.withLock { s in (s.running, s.session, s.drained) = (false, nil, []) } }
        let taps = outputs.compactMap { $0 as? CaptureDataOutput }
        guard let video = inputs.lazy.compactMap({ input -> (any CaptureSource)? in
            if case .video(let source) = input.source { return source }
            return nil
        }).first else {
            throw SwiftRecordError(.invalidState, operation: "run", message: "the session has no picture source; add a CaptureInput(source:) first")
        }
        let pictures = TappedCaptureSource(video, outputs: taps)
        // More picture sources (a camera beside the screen): tracks of their own in the movie file.
        let moreVideo = inputs.compactMap { input -> CaptureInput? in
            if case .video(let source) = input.source, source !== video { return input }
            return nil
        }
        let sounds = inputs.compactMap { input -> (CaptureInput, TappedAudioSource)? in
            guard case .audio(let source) = input.source else { return nil }
            return (input, TappedAudioSource(source, type: input.sampleType, outputs: taps))
        }
        if let movie = outputs.lazy.compactMap({ $0 as? CaptureMovieFileOutput }).first {
            return try await record(pictures, moreVideo, sounds, into: movie)
        }
        if !moreVideo.isEmpty {
            throw SwiftRecordError(.invalidState, operation: "run", message: "a second picture source is recorded only into a movie file (a track of its own); data outputs receive the first picture source's samples")
        }
        try await drain(pictures, sounds.map(\.1))
        return nil
    }

    /// Starts ``run()`` in the background (`startRunning()`); running at once (a stop that
    /// follows ends it). Throws when it is running already.
    public func startRunning() throws(SwiftRecordError) {
        let claimed = try claim()
        let task = Task { try await run(claimed) }
        state.withLock { $0.task = task }
    }

    /// Stops and waits until the run ends (`stopRunning()`): the movie file finished, its
    /// statistics returned; the run's error, if it failed.
    @discardableResult
    public func stopRunning() async throws -> CaptureStatistics? {
        stop()
        guard let task = state.withLock({ s -> Task<CaptureStatistics?, any Error>? in
            defer { s.task = nil }
            return s.task
        }) else { return nil }
        return try await task.value
    }

    /// Waits until the run started by ``startRunning()`` ends — by ``stop()``, the limit or
    /// the picture source's end — without ending it: its statistics, or its error. Nil at
    /// once when no run was started. (Apple's layer watches a recording with it, to finish
    /// the file's delegate however the run ended.)
    @discardableResult
    public func waitUntilStopped() async throws -> CaptureStatistics? {
        guard let task = state[\.task] else { return nil }
        return try await task.value
    }

    /// The movie file's figures so far, while it is being recorded (nil before and after:
    /// the finished file's are on ``CaptureMovieFileOutput/statistics``).
    public var recordingStatistics: CaptureStatistics? { state[\.session]?.statistics }

    /// Ends the run (from any thread): the movie file is finished with what was captured.
    public func stop() {
        let (session, drained, pictures) = state.withLock { s in
            s.stopRequested = true
            return (s.session, s.drained, s.drainedPictures)
        }
        session?.stop()
        for source in drained { source.interrupt() }
        // Every source's stop may come from another thread while it reads (and again later).
        pictures?.stop()
    }

    /// The movie file: a writer with one video input and a titled audio input per sound
    /// source, recorded by a `CaptureSession`.
    private func record(_ pictures: TappedCaptureSource, _ moreVideo: [CaptureInput], _ sounds: [(CaptureInput, TappedAudioSource)],
                        into movie: CaptureMovieFileOutput) async throws -> CaptureStatistics {
        let size = pictures.nativeSize
        let writer = try movie.fileType.map { AssetWriter(outputURL: movie.outputURL, fileType: $0) } ?? AssetWriter(outputURL: movie.outputURL)
        if writer.fileType == .mp4 || writer.fileType == .mov { writer.movieFragmentInterval = movie.movieFragmentInterval }
        let keyInterval = max(1, Int((frameRate.doubleValue * 2).rounded()))
        let videoInput = AssetWriterInput(outputSettings: movie.videoSettings ?? VideoSettings(
            codec: .h264, width: size.width, height: size.height, rateControl: .averageBitRate(2_000_000),
            maxKeyFrameInterval: keyInterval, expectedSourceFrameRate: frameRate))
        videoInput.expectsMediaDataInRealTime = pictures.isLive
        let adaptor = PixelBufferAdaptor(assetWriterInput: videoInput, sourcePixelBufferAttributes: PixelBufferAttributes(
            width: size.width, height: size.height, pixelFormat: pictures.pixelFormat))
        try writer.add(videoInput)
        var videoCaptures: [VideoTrackCapture] = []
        for input in moreVideo {
            guard case .video(let source) = input.source else { continue }
            let size = source.nativeSize
            let trackInput = AssetWriterInput(outputSettings: VideoSettings(
                codec: .h264, width: size.width, height: size.height, rateControl: .averageBitRate(1_000_000),
                maxKeyFrameInterval: keyInterval, expectedSourceFrameRate: frameRate))
            trackInput.expectsMediaDataInRealTime = source.isLive
            trackInput.metadata = AssetMetadata(title: input.trackTitle)
            try writer.add(trackInput)
            videoCaptures.append(VideoTrackCapture(source: source, adaptor: PixelBufferAdaptor(assetWriterInput: trackInput,
                sourcePixelBufferAttributes: PixelBufferAttributes(width: size.width, height: size.height, pixelFormat: source.pixelFormat))))
        }
        var captures: [AudioCapture] = []
        for (input, source) in sounds {
            let audioInput = AssetWriterInput(outputSettings: movie.audioSettings ?? AudioSettings(codec: writer.fileType == .webm ? .opus : .aac))
            audioInput.metadata = AssetMetadata(title: input.trackTitle)
            try writer.add(audioInput)
            captures.append(AudioCapture(source: source, input: audioInput))
        }
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let session = CaptureSession(source: pictures, writer: writer, adaptor: adaptor, frameRate: frameRate, limit: limit,
                                     audioCaptures: captures, videoCaptures: videoCaptures)
        let stopped = state.withLock { s in
            s.session = session
            return s.stopRequested
        }
        if stopped { session.stop() }
        let result: Result<CaptureStatistics, any Error>
        do { result = .success(try await session.run()) } catch { result = .failure(error) }
        // What was captured is kept, whatever ended the run.
        try await writer.finishWriting()
        let statistics = session.statistics
        movie.finished(statistics)
        if case .failure(let error) = result { throw error }
        return statistics
    }

    /// Without a movie file: the picture source paced at the frame rate (read as fast as it
    /// gives pictures when it is not live), each sound source read on a thread of its own,
    /// every sample handed to the data outputs by the taps.
    private func drain(_ pictures: TappedCaptureSource, _ sounds: [TappedAudioSource]) async throws {
        try pictures.start()
        defer { pictures.stop() }
        var started: [TappedAudioSource] = []
        defer { for source in started { source.stop() } }
        for source in sounds {
            try source.start()
            started.append(source)
        }
        let stoppedAlready = state.withLock { s in
            s.drained = sounds
            s.drainedPictures = pictures
            return s.stopRequested
        }
        if stoppedAlready { pictures.stop() }
        let pool = try PixelBufferPool(width: pictures.nativeSize.width, height: pictures.nativeSize.height,
                                       pixelFormat: pictures.pixelFormat, maximumBufferCount: 8)
        let frameRate = frameRate, limit = limit, state = state
        let soundThreads = sounds.map { source in
            MediaCaptureSession.onThread("swift-record.audio") {
                while !state[\.stopRequested], try source.nextChunk() != nil {}
            }
        }
        let pictureThread = MediaCaptureSession.onThread("swift-record.capture") {
            let origin = MonotonicClock.nanoseconds()
            let interval = 1e9 / frameRate.doubleValue
            var n = 0
            while !state[\.stopRequested] {
                if let frames = limit.frames, n >= frames { break }
                if let duration = limit.duration, Double(n) / frameRate.doubleValue >= duration.seconds { break }
                if pictures.isLive {
                    let due = origin + Int64(Double(n) * interval)
                    let wait = due - MonotonicClock.nanoseconds()
                    if wait > 0 { usleep(UInt32(min(wait / 1000, 1_000_000))) }
                    if MonotonicClock.nanoseconds() < due { continue }
                }
                do {
                    guard try pictures.nextFrame(from: pool) != nil else { break }
                } catch let error as SwiftRecordError where error.isNoPictureThisTime {
                    // The handlers still hold every picture: this tick's is dropped.
                } catch where state[\.stopRequested] {
                    // `stop()` stopped the source under a read (an X11 source lets go of its
                    // display): the end asked for, not a failure.
                    break
                }
                n += 1
            }
        }
        let pictureResult = await pictureThread.value
        for source in sounds { source.interrupt() }
        state.withLock { $0.stopRequested = true }
        var failure: (any Error)?
        if case .failure(let error) = pictureResult { failure = error }
        for thread in soundThreads {
            if case .failure(let error) = await thread.value, failure == nil { failure = error }
        }
        if let failure { throw failure }
    }

    /// Runs `body` on a thread of its own; its result when it ends.
    private static func onThread(_ name: String, _ body: @escaping @Sendable () throws -> Void) -> Task<Result<Void, any Error>, Never> {
        Task { await ThreadTask.run(name: name, body) }
    }
}
