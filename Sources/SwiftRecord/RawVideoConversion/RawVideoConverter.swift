import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Converts a raw video or YUV4MPEG2 file (or standard input) into an encoded file:
/// the job behind `swift-record convert`.
///
/// Making a converter checks everything that can be checked before encoding (the input's
/// size and layout against its length, the Y4M header, the options, the container) and
/// settles the plan: sizes, pixel formats, codec, output name. `run()` then reads frames
/// straight into pooled buffers, transforms them only when asked to (crop, scale,
/// rotation, a format the encoder does not take, padding to even sides), and appends
/// them to an `AssetWriter`. On failure the output file is removed, unless
/// `allowPartial` asks to keep what was written.
///
/// ```swift
/// var options = RawVideoConverter.Options(input: "in.yuv")
/// options.size = VideoSize(width: 1280, height: 720)
/// options.frameRate = Rational(30000, 1001)
/// let converter = try RawVideoConverter(options: options)
/// print(converter.plan.outputPath)        // in.mp4
/// let result = try await converter.run()
/// ```
public final class RawVideoConverter: Sendable {
    /// How far a conversion has got.
    public struct Progress: Sendable {
        public var framesWritten: Int
        /// Frames in the input, when known (a file).
        public var totalFrames: Int?
        public var elapsedSeconds: Double
    }

    /// What a finished conversion did.
    public struct Result: Sendable {
        public var framesWritten: Int
        public var outputPath: String
        public var outputBytes: Int64
        /// Media time written: frames / frame rate.
        public var duration: MediaTime
        public var elapsedSeconds: Double
        /// Bytes of an incomplete last frame that were skipped (`allowPartial`).
        public var trailingBytesSkipped: Int
        /// True when `cancel()` stopped the conversion and `allowPartial` kept the frames written.
        public var stoppedEarly: Bool
        /// Seconds of sound written (`Options.audio`); shorter than `duration` when the sound file was.
        public var audioSeconds: Double?
    }

    static let queueDepth = WriterJob.pictureQueueDepth

    public let options: Options
    public let plan: Plan
    private let source: RawVideoFileSource
    let audioPlan: AudioPlan?

    private struct State {
        /// The frame transform, until the conversion thread takes it (it is its only user).
        var transform: FrameTransform?
        var written = 0
        var startedAt: Double?
        var cancelled = false
        var running = false
        var keptFilePath: String?
        var audioSeconds: Double?
    }
    private let state: Locked<State>

    /// After a failed `run()` with `allowPartial`: the file that holds what was written
    /// (the output, or beside an existing output it was to replace, which stays as it
    /// was); nil when nothing was kept.
    public var keptFilePath: String? { state[\.keptFilePath] }

    /// Opens the input and settles the plan. Throws, saying what is wrong, for an input
    /// that does not fit its declared size and layout, a malformed Y4M header, options that
    /// contradict each other, or an output the chosen codec cannot go in. Nothing is
    /// written before `run()`.
    public init(options: Options) throws(SwiftRecordError) {
        self.options = options
        guard [0, 90, 180, 270].contains(options.rotation) else {
            throw SwiftRecordError(.invalidArgument, operation: "rotate", message: "\(options.rotation) is not a quarter turn; expected 90, 180 or 270")
        }
        if options.lossless && options.scale != nil {
            throw SwiftRecordError(.invalidArgument, operation: "lossless",
                                   message: "--scale resamples the picture, so the result could not be lossless; drop --scale or --lossless")
        }
        let source = try RawVideoFileSource(configuration: RawVideoFileSource.Configuration(
            path: options.input, size: options.size, pixelFormat: options.pixelFormat, frameRate: options.frameRate,
            allowPartial: options.allowPartial, maximumFrames: options.maximumFrames))
        let (plan, transform) = try RawVideoConverter.makePlan(options: options, info: source.info)
        if !plan.transformsFrames {
            try source.setCanvasSize(VideoSize(width: plan.settings.width, height: plan.settings.height))
        }
        audioPlan = try RawVideoConverter.makeAudioPlan(options.audio, videoInput: options.input, fileType: plan.fileType, outputPath: plan.outputPath)
        self.source = source
        self.plan = plan
        state = Locked(State(transform: transform))
    }

    // MARK: - Running

    public var progress: Progress {
        let (written, startedAt) = state.withLock { ($0.written, $0.startedAt) }
        return Progress(framesWritten: written, totalFrames: [plan.input.frameCount, options.maximumFrames].compactMap { $0 }.min(),
                        elapsedSeconds: startedAt.map { RawVideoConverter.now() - $0 } ?? 0)
    }

    /// Stops after the frame in progress; `run()` then throws `.cancelled` (and removes
    /// the output unless `allowPartial`, when it finishes the file instead and returns).
    public func cancel() {
        state.withLock { $0.cancelled = true }
        // A read waiting on a pipe whose writer has gone quiet ends now, not when it writes.
        source.interrupt()
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        Double(MonotonicClock.nanoseconds()) / 1e9
    }

    /// Converts every frame and finishes the file. Can be called once.
    public func run() async throws(SwiftRecordError) -> Result {
        try state.withLock { (s: inout sending State) throws(SwiftRecordError) in
            guard !s.running else {
                throw SwiftRecordError(.invalidState, operation: "RawVideoConverter.run", message: "the conversion has already run")
            }
            s.running = true
            s.startedAt = RawVideoConverter.now()
        }
        defer {
            source.stop()
            audioPlan?.source.stop()
        }
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: plan.outputPath), fileType: plan.fileType)
        writer.overwritesExistingFile = options.overwrite
        writer.writeCrashSafe()
        let input = AssetWriterInput(outputSettings: plan.settings)
        input.transform = plan.displayTransform
        input.queueDepth = RawVideoConverter.queueDepth
        let audioInput = audioPlan.map { AssetWriterInput(mediaType: .audio, outputSettings: $0.settings) }

        let job = WriterJob(writer: writer, outputPath: plan.outputPath, allowPartial: options.allowPartial)
        do {
            _ = try await job.run(threadName: "swift-record.convert", finishing: [input] + (audioInput.map { [$0] } ?? [])) { () throws(SwiftRecordError) in
                try self.pump(writer: writer, input: input, audioInput: audioInput)
            }
        } catch {
            state.withLock { $0.keptFilePath = error.keptPath }
            throw error.error
        }
        let (frames, cancelled) = state.withLock { ($0.written, $0.cancelled) }
        if !cancelled, let total = plan.input.frameCount {
            let expected = options.maximumFrames.map { min($0, total) } ?? total
            if frames < expected {
                // The file is complete and playable, but not what was announced: say so.
                state.withLock { $0.keptFilePath = plan.outputPath }
                throw SwiftRecordError(.invalidData, operation: options.input == "-" ? "standard input" : options.input,
                                       message: "ended after \(frames) of the \(expected) frames it held when the conversion started (it shrank while being read)")
            }
        }
        let rate = plan.input.frameRate
        var st = stat()
        let bytes: Int64 = PathBytes.withCString(plan.outputPath, { stat($0, &st) }) == 0 ? Int64(st.st_size) : 0
        return Result(framesWritten: frames, outputPath: plan.outputPath, outputBytes: bytes,
                      duration: MediaTime(value: Int64(frames) * Int64(rate.denominator), timescale: rate.numerator),
                      elapsedSeconds: progress.elapsedSeconds,
                      trailingBytesSkipped: plan.input.trailingBytes + source.trailingBytesSkipped,
                      stoppedEarly: cancelled, audioSeconds: state[\.audioSeconds])
    }

    /// Removes what this conversion wrote: cancels a writer still writing (which deletes
    /// its file) and deletes the file a failed writer finalised. Never a file that was
    /// there before (a replaced file is replaced only on success).
    private func nextFrame(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame? {
        do {
            return try source.nextFrame(from: pool)
        } catch let e as SwiftRecordError {
            throw e
        } catch {
            throw SwiftRecordError(.io, operation: source.info.container == .y4m ? "read y4m" : "read", message: "\(error)")
        }
    }

    /// Runs on the conversion thread: reads, transforms and appends every frame.
    private func pump(writer: AssetWriter, input: AssetWriterInput, audioInput: AssetWriterInput?) throws(SwiftRecordError) {
        // This thread is the transform's one user from here on.
        let transform = state.withLock { s in
            let taken = s.transform
            s.transform = nil
            return taken
        }
        // The buffers appended stay out while the writer's queue holds them (its depth),
        // beside one being read and one transformed or handed over; with a transform the
        // source buffers are never queued and two do.
        let queued = input.queueDepth + 2
        let sourcePool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height,
                                             pixelFormat: source.pixelFormat, maximumBufferCount: transform == nil ? queued : 2)
        let outputPool = try transform.map { (t: FrameTransform) throws(SwiftRecordError) in
            try PixelBufferPool(width: t.destinationSize.width, height: t.destinationSize.height,
                                pixelFormat: t.destinationFormat, maximumBufferCount: queued)
        }
        // The first frame is read before the output is created, so an input with no whole
        // frame (standard input can only tell by reading) leaves no file behind.
        var next = try nextFrame(from: sourcePool)
        guard next != nil else {
            throw SwiftRecordError(.invalidData, operation: source.configuration.path == "-" ? "standard input" : source.configuration.path,
                                   message: "holds no whole frame (\(plan.input.size) \(plan.input.pixelFormat) frames are \(plan.input.frameBytes) bytes)")
        }
        try writer.add(input)
        var audio = try audioInput.flatMap { (i: AssetWriterInput) throws(SwiftRecordError) -> AudioFeed? in
            try writer.add(i)
            return audioPlan.map { AudioFeed(source: $0.source, input: i) }
        }
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let rate = plan.input.frameRate
        func time(ofFrame n: Int) -> MediaTime { MediaTime(value: Int64(n) * Int64(rate.denominator), timescale: rate.numerator) }
        // The sound after the last picture is cut there, whatever stops the pictures.
        defer {
            if audio != nil {
                let end = time(ofFrame: state[\.written])
                try? audio?.append(upTo: end)
                state.withLock { $0.audioSeconds = audio?.seconds }
                try? writer.endSession(atSourceTime: end)
            }
        }
        while next != nil {
            if let written = state.withLock({ $0.cancelled ? $0.written : nil }) {
                throw SwiftRecordError(.cancelled, operation: "convert", message: "cancelled after \(written) frames")
            }
            try append(taking: &next, to: input, transform: transform, outputPool: outputPool)
            let written = state.withLock { s in s.written += 1; return s.written }
            // The sound up to the next picture's time: the tracks interleave in the file.
            try audio?.append(upTo: time(ofFrame: written))
            // Read the next frame only once it can be queued: no filled buffer waits, and the
            // last one was let go, so the frames in memory are the queue's and no more.
            try input.waitUntilReadyForMoreMediaData()
            next = try nextFrame(from: sourcePool)
        }
    }

    /// Transforms (when asked) and appends the frame in `slot`, emptying it, so that nothing
    /// but the writer's queue holds the picture afterwards.
    private func append(taking slot: inout CapturedFrame?, to input: AssetWriterInput, transform: FrameTransform?,
                        outputPool: PixelBufferPool?) throws(SwiftRecordError) {
        guard let frame = slot else { return }
        slot = nil
        let buffer: PixelBuffer
        if let transform, let outputPool {
            let out = try outputPool.makePixelBuffer()
            try transform.apply(frame.pixelBuffer, into: out)
            buffer = out
        } else {
            buffer = frame.pixelBuffer
        }
        try input.append(SampleBuffer(pixelBuffer: buffer, presentationTimeStamp: frame.captureTime))
    }
}
