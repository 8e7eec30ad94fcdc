import Foundation

/// What a raw video input holds, as found before any frame is read: size, layout, rate,
/// and, for a file, how many whole frames it has.
public struct RawVideoStreamInfo: Sendable {
    public enum Container: String, Sendable {
        /// Frames back to back with nothing between them (`.yuv`, `.rgb`, …).
        case raw
        /// YUV4MPEG2: a header line, then each frame after a `FRAME` line.
        case y4m
    }

    public var container: Container
    /// The size of the pictures in the input.
    public var size: VideoSize
    public var pixelFormat: RawPixelFormat
    /// Frames per second: `--fps`, else the Y4M header's, else 25 (as ffmpeg assumes for raw video).
    public var frameRate: Rational
    /// Where the rate came from: "--fps", "header" or "default".
    public var frameRateOrigin: String
    /// Bytes of one frame's samples (without a Y4M `FRAME` line).
    public var frameBytes: Int
    /// Whole frames in the input, when its length is known (a regular file).
    public var frameCount: Int?
    /// Bytes after the last whole frame (an incomplete frame), when the length is known.
    public var trailingBytes: Int
    /// The length of the input in bytes, when known.
    public var byteCount: Int64?
    /// The Y4M stream header, for Y4M input.
    public var y4mHeader: Y4MStreamHeader?
}

/// Reads fixed-size frames from a raw video file, a YUV4MPEG2 (`.y4m`) file, or standard
/// input (`-`), straight into pooled pixel buffers.
///
/// Y4M is recognised by its first bytes (`YUV4MPEG2 `), whatever the file is called; it
/// carries its own size, rate and layout. Raw input needs a size and a pixel format.
/// Frame `i` is stamped `i / frameRate`.
///
/// Everything that can be checked before reading a frame is checked when the source is
/// made: a file whose length is not a whole number of frames is refused (unless
/// `allowPartial`, when the incomplete tail is skipped), a file too small for one frame is
/// refused, and Y4M headers are parsed and every frame header of a file is visited.
///
/// With a `canvasSize` larger than the picture (a 4:2:0 encoder needs even sides), frames
/// are read into the top-left corner of canvas-sized buffers and the last column and row
/// are repeated to fill them: still no copy.
public final class RawVideoFileSource: CaptureSource {
    public static let name = "yuv"
    /// The rate raw video is taken to have when nothing says otherwise (ffmpeg's too).
    public static let defaultFrameRate = Rational(25)!

    /// What to read: the source's typed settings (also what `swift-record convert` reads).
    public struct Configuration: CaptureSourceConfiguration {
        public static let sourceName = RawVideoFileSource.name

        /// A file, or `-` for standard input.
        public var path: String
        /// The picture size; required for raw input, ignored for Y4M (its header says).
        public var size: VideoSize?
        /// The sample layout of raw input (default yuv420p); ignored for Y4M.
        public var pixelFormat: RawPixelFormat?
        /// Frames per second; overrides a Y4M header's rate.
        public var frameRate: Rational?
        /// Deliver frames in buffers of this size (at least the picture's), edges repeated.
        public var canvasSize: VideoSize?
        /// Accept an incomplete last frame (it is skipped) instead of refusing the input.
        public var allowPartial: Bool
        /// Read at most this many frames. Required for a device that never ends (/dev/zero).
        public var maximumFrames: Int?

        public init(path: String, size: VideoSize? = nil, pixelFormat: RawPixelFormat? = nil, frameRate: Rational? = nil,
                    canvasSize: VideoSize? = nil, allowPartial: Bool = false, maximumFrames: Int? = nil) {
            self.path = path
            self.size = size
            self.pixelFormat = pixelFormat
            self.frameRate = frameRate
            self.canvasSize = canvasSize
            self.allowPartial = allowPartial
            self.maximumFrames = maximumFrames
        }
    }

    public let identifier = RawVideoFileSource.name
    public let info: RawVideoStreamInfo
    /// Size of the buffers frames are delivered in: the canvas, or the picture size.
    public var nativeSize: VideoSize { reader.withLock { $0.canvas } }
    public let pixelFormat: PixelFormat
    public var nativeFrameRate: Rational? { info.y4mHeader?.frameRate }
    public let isLive = false
    public let configuration: Configuration

    /// The input and the reading position. A source is read by one capture thread; the
    /// lock is held for each frame's read, so `stop()` on another thread waits for it.
    private let reader: Locked<RawFrameReader>
    private let wakeUp = WakeUp()

    /// Bytes of an incomplete last frame skipped so far (with `allowPartial`).
    public var trailingBytesSkipped: Int { reader.withLock { $0.trailingBytesSkipped } }
    /// Frames delivered so far.
    public var framesRead: Int { reader.withLock { $0.next } }

    /// Opens the input, reads a Y4M header if there is one, and checks the input against
    /// the size and layout. Throws, naming what is wrong, before any frame is read.
    public init(configuration: Configuration) throws(SwiftRecordError) {
        self.configuration = configuration
        let stream = try RawInputStream(path: configuration.path, wakeUp: wakeUp)
        if let n = configuration.maximumFrames, n < 1 {
            throw SwiftRecordError(.invalidArgument, operation: "frames", message: "\(n) is not valid; expected a whole number of at least 1")
        }
        if stream.isDevice && configuration.maximumFrames == nil {
            throw SwiftRecordError(.invalidArgument, operation: stream.name,
                                   message: "is a device that may never end; pass --frames N to read N frames from it")
        }
        var info = try RawVideoFileSource.probe(stream, configuration: configuration)
        let canvas = configuration.canvasSize ?? info.size
        guard canvas.width >= info.size.width, canvas.height >= info.size.height else {
            throw SwiftRecordError(.invalidArgument, operation: "RawVideoFileSource",
                                   message: "canvas \(canvas) is smaller than the \(info.size) picture")
        }
        info.frameRate = configuration.frameRate ?? info.frameRate
        if configuration.frameRate != nil { info.frameRateOrigin = "--fps" }
        self.info = info
        pixelFormat = info.pixelFormat.pixelFormat
        reader = Locked(RawFrameReader(stream: stream, info: info, canvas: canvas, allowPartial: configuration.allowPartial,
                                       maximumFrames: configuration.maximumFrames))
    }

    /// The source for `--source yuv` from a registry: its `Configuration` from `options`,
    /// with the common size and frame rate where it gives none. Frames are padded to even
    /// sides, since the recording is 4:2:0.
    public convenience init(captureOptions options: CaptureSourceOptions) throws(SwiftRecordError) {
        guard var configuration = options.configuration(Configuration.self) else {
            throw SwiftRecordError(.invalidArgument, operation: "source yuv",
                                   message: "needs an input file (a RawVideoFileSource.Configuration with its path: a file or - for standard input)")
        }
        configuration.size = configuration.size ?? options.size
        configuration.frameRate = configuration.frameRate ?? options.frameRate
        try self.init(configuration: configuration)
        if configuration.canvasSize == nil {
            let size = info.size
            try setCanvasSize(VideoSize(width: (size.width + 1) & ~1, height: (size.height + 1) & ~1))
        }
    }

    /// Delivers frames in buffers of `size` (at least the picture's), the picture in the
    /// top-left corner and its last column and row repeated over the rest. Only before
    /// the first frame is read.
    public func setCanvasSize(_ size: VideoSize) throws(SwiftRecordError) {
        guard size.width >= info.size.width, size.height >= info.size.height else {
            throw SwiftRecordError(.invalidArgument, operation: "RawVideoFileSource.setCanvasSize",
                                   message: "canvas \(size) is smaller than the \(info.size) picture")
        }
        try reader.withLock { (r: inout sending RawFrameReader) throws(SwiftRecordError) in
            guard r.next == 0, !r.ended else {
                throw SwiftRecordError(.invalidState, operation: "RawVideoFileSource.setCanvasSize", message: "frames have already been read")
            }
            r.canvas = size
        }
    }

    public func start() throws {}

    /// Stops reading: a read waiting on a pipe that has gone quiet ends at once (it
    /// throws `.cancelled`), then the input is closed.
    public func stop() {
        wakeUp.interrupt()
        reader.withLock { $0.close() }
    }

    /// Makes a read waiting on a quiet pipe, and every later read, throw `.cancelled`,
    /// without waiting for the reader (the conversion's cancel).
    public func interrupt() { wakeUp.interrupt() }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        try reader.withLock { (r: inout sending RawFrameReader) throws(SwiftRecordError) -> CapturedFrame? in try r.readFrame(from: pool) }
    }
}
