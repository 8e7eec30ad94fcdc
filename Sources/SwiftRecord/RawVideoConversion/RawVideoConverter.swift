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
public final class RawVideoConverter: @unchecked Sendable {
    /// What to convert and how.
    public struct Options: Sendable {
        /// A file, or `-` for standard input.
        public var input: String
        /// The output file; nil: the input's name with the container's extension, next to it.
        public var output: String?
        /// Picture size of raw input (Y4M says its own).
        public var size: VideoSize?
        /// Sample layout of raw input; nil: yuv420p (Y4M says its own).
        public var pixelFormat: RawPixelFormat?
        /// Frames per second; nil: the Y4M header's, else 25.
        public var frameRate: Rational?
        /// nil: H.264, or FFV1 when only FFV1 can keep the input exactly (`lossless` with RGB input).
        public var codec: VideoCodec?
        /// How the encoder spends bits; ignored with `lossless`.
        public var rateControl: RateControl
        /// Encoder preset (x264's names).
        public var preset: String?
        /// Largest key-frame interval in frames; nil: two seconds' worth.
        public var keyFrameInterval: Int?
        /// Encoder threads; nil or 0: the encoder chooses.
        public var threads: Int?
        /// Keep every sample exactly: H.264 at qp 0 in the input's chroma format, or FFV1 in Matroska.
        public var lossless: Bool
        /// Output picture size (after rotation).
        public var scale: VideoSize?
        /// The part of the input picture to keep.
        public var crop: CropRegion?
        /// Clockwise quarter turn: 0, 90, 180 or 270.
        public var rotation: Int
        /// Write the rotation as display-matrix metadata instead of turning the pixels.
        public var rotationInMetadataOnly: Bool
        /// Convert the whole frames of an input that ends inside a frame (the rest is skipped),
        /// and keep the output written so far when something fails.
        public var allowPartial: Bool
        /// Extra encoder options passed through as FFmpeg AVOptions.
        public var encoderOptions: [String: String]
        /// Convert at most this many frames (needed for a device such as /dev/zero).
        public var maximumFrames: Int?

        public init(input: String, output: String? = nil, size: VideoSize? = nil, pixelFormat: RawPixelFormat? = nil,
                    frameRate: Rational? = nil, codec: VideoCodec? = nil, rateControl: RateControl = .averageBitRate(2_000_000),
                    preset: String? = "veryfast", keyFrameInterval: Int? = nil, threads: Int? = nil, lossless: Bool = false,
                    scale: VideoSize? = nil, crop: CropRegion? = nil, rotation: Int = 0, rotationInMetadataOnly: Bool = false,
                    allowPartial: Bool = false, encoderOptions: [String: String] = [:], maximumFrames: Int? = nil) {
            self.maximumFrames = maximumFrames
            self.input = input
            self.output = output
            self.size = size
            self.pixelFormat = pixelFormat
            self.frameRate = frameRate
            self.codec = codec
            self.rateControl = rateControl
            self.preset = preset
            self.keyFrameInterval = keyFrameInterval
            self.threads = threads
            self.lossless = lossless
            self.scale = scale
            self.crop = crop
            self.rotation = rotation
            self.rotationInMetadataOnly = rotationInMetadataOnly
            self.allowPartial = allowPartial
            self.encoderOptions = encoderOptions
        }
    }

    /// The settled conversion: what was found in the input and what will be written.
    public struct Plan: Sendable {
        public let input: RawVideoStreamInfo
        public let outputPath: String
        public let fileType: FileType
        /// The encoder's settings: codec, encoded size and pixel format, rate control.
        public let settings: VideoSettings
        /// The picture's size after crop, scale and rotation, before padding to even sides.
        public let pictureSize: VideoSize
        /// Display rotation written as metadata (identity unless `rotationInMetadataOnly`).
        public let displayTransform: VideoTransform
        /// Whether frames go through a crop / scale / format / rotation step (else they
        /// reach the encoder in the buffers they were read into).
        public let transformsFrames: Bool
        /// Sentences worth telling the user: defaults taken, options ignored, padding.
        public let notes: [String]

        /// True when the picture was padded to the encoded size.
        public var isPadded: Bool { pictureSize.width != settings.width || pictureSize.height != settings.height }
    }

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
    }

    /// Pictures queued for the encoder: two, so that when it finishes one the next is
    /// already there while a third is read. The encoder keeps its own look-ahead, so a
    /// deeper queue would only hold more pictures in memory (1.4 MB each at 720p).
    static let queueDepth = 2

    public let options: Options
    public let plan: Plan
    private let source: RawVideoFileSource
    private let transform: FrameTransform?

    private let lock = Lock()
    private var written = 0
    private var startedAt: Double?
    private var cancelled = false
    private var running = false

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
        let source = try RawVideoFileSource(options: RawVideoFileSource.Options(
            path: options.input, size: options.size, pixelFormat: options.pixelFormat, frameRate: options.frameRate,
            allowPartial: options.allowPartial, maximumFrames: options.maximumFrames))
        let (plan, transform) = try RawVideoConverter.makePlan(options: options, info: source.info)
        if !plan.transformsFrames {
            try source.setCanvasSize(VideoSize(width: plan.settings.width, height: plan.settings.height))
        }
        self.source = source
        self.plan = plan
        self.transform = transform
    }

    // MARK: - Planning

    private static func makePlan(options: Options, info: RawVideoStreamInfo) throws(SwiftRecordError) -> (Plan, FrameTransform?) {
        var notes: [String] = []
        let y4m = info.y4mHeader
        if let h = y4m {
            if let size = options.size, size != info.size {
                notes.append("--size \(size) is ignored: the YUV4MPEG2 header says \(info.size)")
            }
            if let f = options.pixelFormat, f != info.pixelFormat {
                notes.append("--pix-fmt \(f) is ignored: the YUV4MPEG2 header says C\(h.colorSpace) (\(info.pixelFormat))")
            }
            if let fps = options.frameRate, let rate = h.frameRate, fps != rate {
                notes.append("--fps \(fps) replaces the header's rate \(rate)")
            }
            if h.interlacing == .topFieldFirst || h.interlacing == .bottomFieldFirst || h.interlacing == .mixed {
                notes.append("the input is interlaced (\(h.interlacing.rawValue)); its frames are encoded as progressive pictures")
            }
        }
        if info.frameRateOrigin == "default" {
            notes.append("no frame rate given; using \(info.frameRate) fps (pass --fps)")
        }

        let inputFormat = info.pixelFormat.pixelFormat
        // Crop, then scale, then rotate: the picture's size at each step.
        let cropped = options.crop?.size ?? info.size
        if let crop = options.crop {
            try FrameTransform.validate(crop: crop, in: info.size, format: inputFormat)
        }
        let pixelRotation = options.rotationInMetadataOnly ? 0 : options.rotation
        let quarter = pixelRotation == 90 || pixelRotation == 270
        func turned(_ s: VideoSize) -> VideoSize { quarter ? VideoSize(width: s.height, height: s.width) : s }
        let picture = options.scale ?? turned(cropped)
        let scaledBeforeRotation = turned(picture)

        // Codec and the pixel format the encoder gets.
        var codec = options.codec ?? .h264
        let encoderFormat: PixelFormat
        let rateControl: RateControl
        let keepSamples = options.lossless || codec == .ffv1
        if keepSamples {
            if inputFormat.isRGB {
                if let c = options.codec, c != .ffv1 {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "\(info.pixelFormat) input is kept exactly only by FFV1 (in .mkv); \(c) would convert it to YUV. Drop --codec or use --codec ffv1")
                }
                codec = .ffv1
                encoderFormat = inputFormat == .rgba ? .bgra : (inputFormat == .rgb24 ? .bgr0 : inputFormat)
            } else {
                encoderFormat = inputFormat.planarEquivalent
                let (sx, sy) = encoderFormat.chromaShift
                let oddForChroma = (sx > 0 && picture.width % 2 != 0) || (sy > 0 && picture.height % 2 != 0)
                if oddForChroma && codec != .ffv1 {
                    if options.codec != nil {
                        throw SwiftRecordError(.unsupported, operation: "lossless",
                                               message: "\(picture) \(encoderFormat) has an odd side, which \(codec) cannot encode without padding; use --crop to an even size, or FFV1 (--codec ffv1, .mkv)")
                    }
                    codec = .ffv1
                    notes.append("the \(picture) picture has an odd side, which H.264 \(encoderFormat) cannot hold exactly: using FFV1 in Matroska")
                }
                if quarter && sx != sy {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "turning \(encoderFormat) pictures by \(pixelRotation)° would resample their chroma, so it cannot be lossless; use --rotate-metadata")
                }
                if codec == .av1 {
                    throw SwiftRecordError(.unsupported, operation: "lossless",
                                           message: "the AV1 encoder has no lossless mode here; use h264 (the default), hevc, vp9 or ffv1")
                }
            }
            rateControl = codec == .ffv1 ? .encoderDefault : .constantQuantizer(0)
            if options.lossless {
                notes.append(codec == .ffv1 ? "lossless: FFV1 in \(encoderFormat)" : "lossless: \(codec) at qp 0 in \(encoderFormat)")
            }
        } else {
            encoderFormat = .yuv420p
            rateControl = options.rateControl
        }

        // 4:2:0 and 4:2:2 encoders (FFV1 aside) need even sides: pad by repeating the last column / row.
        let (sx, sy) = codec == .ffv1 ? (0, 0) : encoderFormat.chromaShift
        let encoded = VideoSize(width: sx > 0 ? (picture.width + 1) & ~1 : picture.width,
                                height: sy > 0 ? (picture.height + 1) & ~1 : picture.height)
        if encoded != picture {
            notes.append("\(picture) has an odd side; encoding \(encoded) by repeating the last \(encoded.width != picture.width && encoded.height != picture.height ? "column and row" : (encoded.width != picture.width ? "column" : "row")) (use --crop to cut instead)")
        }

        // Output name and container.
        let outputPath: String
        if let o = options.output {
            outputPath = o
        } else {
            guard options.input != "-" else {
                throw SwiftRecordError(.invalidArgument, operation: "output",
                                       message: "reading standard input: name the output file with -o")
            }
            outputPath = RawVideoConverter.replacingExtension(of: options.input, with: codec == .ffv1 ? "mkv" : "mp4")
        }
        let outputURL = URL(fileURLWithPath: outputPath)
        guard let fileType = FileType(pathExtension: outputURL.pathExtension) else {
            throw SwiftRecordError(.invalidArgument, operation: "output",
                                   message: "'\(outputPath)' has no known container extension; expected .mp4, .mov, .mkv or .webm")
        }
        guard fileType.supports(codec) else {
            let fits = FileType.allCases.filter { $0.supports(codec) }.map { ".\($0)" }.joined(separator: " or ")
            throw SwiftRecordError(.unsupported, operation: "output",
                                   message: "a .\(fileType) file cannot carry \(codec)\(keepSamples && codec == .ffv1 ? " (which keeps this input exactly)" : ""); name the output \(fits)")
        }
        if options.input != "-", RawVideoConverter.sameFile(options.input, outputPath) {
            throw SwiftRecordError(.invalidArgument, operation: "output", message: "'\(outputPath)' is the input file; choose another output name")
        }
        let directory = outputURL.deletingLastPathComponent().path
        guard access(directory, W_OK) == 0 else {
            throw SwiftRecordError(.io, operation: "output", message: "cannot write '\(outputPath)': the directory \(directory) does not exist or is not writable")
        }

        // YUV keeps its range (no conversion, honest tags): a Y4M header's XCOLORRANGE, else
        // limited, except gray, which FFmpeg writes full range. RGB becomes limited BT.709.
        let fullRange = inputFormat.isRGB ? false : (y4m?.fullRange ?? (inputFormat == .gray))
        let fps = info.frameRate
        var settings = VideoSettings(
            codec: codec, width: encoded.width, height: encoded.height, pixelFormat: encoderFormat,
            rateControl: rateControl,
            maxKeyFrameInterval: options.keyFrameInterval ?? max(1, Int((2 * fps.doubleValue).rounded())),
            expectedSourceFrameRate: fps, profile: nil, preset: options.preset,
            threads: options.threads.flatMap { $0 > 0 ? $0 : nil },
            colorProperties: ColorProperties(standard: .bt709, fullRange: fullRange),
            encoderOptions: options.encoderOptions)
        if let sar = y4m?.pixelAspectRatio {
            settings.pixelAspectRatio = quarter ? Rational(sar.denominator, sar.numerator) : sar
        }
        let transformsFrames = options.crop != nil || scaledBeforeRotation != cropped || pixelRotation != 0 || encoderFormat != inputFormat
        let transform = transformsFrames
            ? try FrameTransform(sourceSize: info.size, sourceFormat: inputFormat, crop: options.crop, scaledSize: scaledBeforeRotation,
                                 rotation: pixelRotation, destinationFormat: encoderFormat, destinationSize: encoded,
                                 color: settings.colorProperties)
            : nil
        let display = options.rotationInMetadataOnly ? (VideoTransform(rotationDegrees: options.rotation) ?? .identity) : .identity
        let plan = Plan(input: info, outputPath: outputPath, fileType: fileType, settings: settings, pictureSize: picture,
                        displayTransform: display, transformsFrames: transformsFrames, notes: notes)
        return (plan, transform)
    }

    /// `dir/in.yuv` → `dir/in.mp4`; a name without an extension gets one.
    static func replacingExtension(of path: String, with ext: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return String(path[..<dot]) + "." + ext
        }
        return path + "." + ext
    }

    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    // MARK: - Running

    public var progress: Progress {
        lock.withLock {
            Progress(framesWritten: written, totalFrames: [plan.input.frameCount, options.maximumFrames].compactMap { $0 }.min(),
                     elapsedSeconds: startedAt.map { RawVideoConverter.now() - $0 } ?? 0)
        }
    }

    /// Stops after the frame in progress; `run()` then throws `.cancelled` (and removes
    /// the output unless `allowPartial`, when it finishes the file instead and returns).
    public func cancel() { lock.withLock { cancelled = true } }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Converts every frame and finishes the file. Can be called once.
    public func run() async throws(SwiftRecordError) -> Result {
        try lock.withLock { () throws(SwiftRecordError) in
            guard !running else {
                throw SwiftRecordError(.invalidState, operation: "RawVideoConverter.run", message: "the conversion has already run")
            }
            running = true
            startedAt = RawVideoConverter.now()
        }
        defer { source.stop() }
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: plan.outputPath), fileType: plan.fileType)
        let input = AssetWriterInput(outputSettings: plan.settings)
        input.transform = plan.displayTransform
        input.queueDepthOverride = RawVideoConverter.queueDepth

        let pumped: Swift.Result<Void, SwiftRecordError> = await withCheckedContinuation { c in
            let thread = Thread { c.resume(returning: Swift.Result { () throws(SwiftRecordError) in try self.pump(writer: writer, input: input) }) }
            thread.name = "swift-record.convert"
            thread.start()
        }
        var failure: SwiftRecordError?
        if case .failure(let e) = pumped { failure = e }
        if (failure == nil || options.allowPartial) && writer.status == .writing {
            input.markAsFinished()
            do {
                try await writer.finishWriting()
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure {
            // Cancelled with allowPartial: the file is finished; report what was written.
            let keptOnCancel = failure.kind == .cancelled && options.allowPartial && writer.status == .completed
            if !keptOnCancel {
                if !options.allowPartial { discard(writer) }
                throw failure
            }
        }
        let frames = lock.withLock { written }
        let rate = plan.input.frameRate
        var st = stat()
        let bytes: Int64 = stat(plan.outputPath, &st) == 0 ? Int64(st.st_size) : 0
        return Result(framesWritten: frames, outputPath: plan.outputPath, outputBytes: bytes,
                      duration: MediaTime(value: Int64(frames) * Int64(rate.denominator), timescale: rate.numerator),
                      elapsedSeconds: progress.elapsedSeconds,
                      trailingBytesSkipped: plan.input.trailingBytes + source.trailingBytesSkipped,
                      stoppedEarly: lock.withLock { cancelled })
    }

    /// Removes the output: cancels a writer still writing (which deletes the file) and
    /// deletes the file a failed writer finalised.
    private func discard(_ writer: AssetWriter) {
        let status = writer.status
        writer.cancelWriting()
        if status == .failed || status == .completed || status == .writing {
            _ = unlink(plan.outputPath)
        }
    }

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
    private func pump(writer: AssetWriter, input: AssetWriterInput) throws(SwiftRecordError) {
        // Two buffers: one being read while the other is transformed or handed over; the
        // writer's queue holds references to the storage, not the buffers.
        let sourcePool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height,
                                             pixelFormat: source.pixelFormat, maximumBufferCount: 2)
        let outputPool = try transform.map { (t: FrameTransform) throws(SwiftRecordError) in
            try PixelBufferPool(width: t.destinationSize.width, height: t.destinationSize.height,
                                pixelFormat: t.destinationFormat, maximumBufferCount: 2)
        }
        // The first frame is read before the output is created, so an input with no whole
        // frame (standard input can only tell by reading) leaves no file behind.
        var next = try nextFrame(from: sourcePool)
        guard next != nil else {
            throw SwiftRecordError(.invalidData, operation: source.options.path == "-" ? "standard input" : source.options.path,
                                   message: "holds no whole frame (\(plan.input.size) \(plan.input.pixelFormat) frames are \(plan.input.frameBytes) bytes)")
        }
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        while next != nil {
            if lock.withLock({ cancelled }) {
                throw SwiftRecordError(.cancelled, operation: "convert", message: "cancelled after \(lock.withLock { written }) frames")
            }
            try append(taking: &next, to: input, outputPool: outputPool)
            lock.withLock { written += 1 }
            // Read the next frame only once it can be queued: no filled buffer waits, and the
            // last one was let go, so the frames in memory are the queue's and no more.
            try writer.waitForRoom(in: input)
            next = try nextFrame(from: sourcePool)
        }
    }

    /// Transforms (when asked) and appends the frame in `slot`, emptying it, so that nothing
    /// but the writer's queue holds the picture afterwards.
    private func append(taking slot: inout CapturedFrame?, to input: AssetWriterInput, outputPool: PixelBufferPool?) throws(SwiftRecordError) {
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
