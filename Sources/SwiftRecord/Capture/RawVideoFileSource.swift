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
public final class RawVideoFileSource: CaptureSource, @unchecked Sendable {
    public static let name = "yuv"
    /// The rate raw video is taken to have when nothing says otherwise (ffmpeg's too).
    public static let defaultFrameRate = Rational(25)!

    public struct Options: Sendable {
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
            self.maximumFrames = maximumFrames
            self.path = path
            self.size = size
            self.pixelFormat = pixelFormat
            self.frameRate = frameRate
            self.canvasSize = canvasSize
            self.allowPartial = allowPartial
        }
    }

    public let identifier = RawVideoFileSource.name
    public let info: RawVideoStreamInfo
    /// Size of the buffers frames are delivered in: the canvas, or the picture size.
    public var nativeSize: VideoSize { lock.withLock { canvas } }
    public let pixelFormat: PixelFormat
    public var nativeFrameRate: Rational? { info.y4mHeader?.frameRate }
    public let isLive = false
    public let options: Options

    private let lock = Lock()
    private let stream: RawInputStream
    private var next = 0
    private var ended = false
    private var storedTrailingBytes = 0
    private var canvas: VideoSize

    /// Bytes of an incomplete last frame skipped so far (with `allowPartial`).
    public var trailingBytesSkipped: Int { lock.withLock { storedTrailingBytes } }
    /// Frames delivered so far.
    public var framesRead: Int { lock.withLock { next } }

    /// Opens the input, reads a Y4M header if there is one, and checks the input against
    /// the size and layout. Throws, naming what is wrong, before any frame is read.
    public init(options: Options) throws(SwiftRecordError) {
        self.options = options
        let stream = try RawInputStream(path: options.path)
        self.stream = stream
        let display = options.path == "-" ? "standard input" : options.path
        if let n = options.maximumFrames, n < 1 {
            throw SwiftRecordError(.invalidArgument, operation: "frames", message: "\(n) is not valid; expected a whole number of at least 1")
        }
        if stream.isDevice && options.maximumFrames == nil {
            throw SwiftRecordError(.invalidArgument, operation: display,
                                   message: "is a device that may never end; pass --frames N to read N frames from it")
        }
        let start = try stream.peek(Y4MStreamHeader.signature.count + 1)
        var info: RawVideoStreamInfo
        if Y4MStreamHeader.hasSignature(start) {
            info = try RawVideoFileSource.openY4M(stream, name: display, options: options)
        } else {
            if options.path.lowercased().hasSuffix(".y4m") {
                throw SwiftRecordError(.invalidData, operation: display, message: start.isEmpty
                                       ? "is empty; expected a YUV4MPEG2 stream"
                                       : "is not a YUV4MPEG2 stream: it does not start with 'YUV4MPEG2 ' (found '\(RawVideoFileSource.printable(start))'); for raw frames give the file another extension and pass --size and --pix-fmt")
            }
            info = try RawVideoFileSource.openRaw(stream, name: display, options: options, empty: start.isEmpty)
        }
        let canvas = options.canvasSize ?? info.size
        guard canvas.width >= info.size.width, canvas.height >= info.size.height else {
            throw SwiftRecordError(.invalidArgument, operation: "RawVideoFileSource",
                                   message: "canvas \(canvas) is smaller than the \(info.size) picture")
        }
        info.frameRate = options.frameRate ?? info.frameRate
        if options.frameRate != nil { info.frameRateOrigin = "--fps" }
        self.info = info
        self.canvas = canvas
        pixelFormat = info.pixelFormat.pixelFormat
    }

    /// The source for `swift-record record --source yuv`: parameters `input` (a path or `-`),
    /// `pix-fmt` and `allow-partial`; the size from `--size`. Frames are padded to even
    /// sides, since the recording is 4:2:0.
    public convenience init(captureOptions: CaptureSourceOptions) throws(SwiftRecordError) {
        guard let path = captureOptions.parameters["input"] else {
            throw SwiftRecordError(.invalidArgument, operation: "source yuv",
                                   message: "needs an input file (parameter 'input': a path or - for standard input)")
        }
        let format = try captureOptions.parameters["pix-fmt"].map { (t: String) throws(SwiftRecordError) in try RawPixelFormat.parse(t) }
        try self.init(options: Options(path: path, size: captureOptions.size, pixelFormat: format, frameRate: captureOptions.frameRate,
                                       allowPartial: ["1", "true", "yes"].contains(captureOptions.parameters["allow-partial"] ?? "")))
        let size = info.size
        try setCanvasSize(VideoSize(width: (size.width + 1) & ~1, height: (size.height + 1) & ~1))
    }

    static func printable(_ bytes: [UInt8]) -> String {
        String(bytes.prefix(12).map { (0x20..<0x7f).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }

    private static func openRaw(_ stream: RawInputStream, name: String, options: Options, empty: Bool) throws(SwiftRecordError) -> RawVideoStreamInfo {
        guard let size = options.size else {
            throw SwiftRecordError(.invalidArgument, operation: name,
                                   message: "raw video needs --size WxH (and --pix-fmt unless it is yuv420p): a raw file does not say its picture size; only .y4m files carry one")
        }
        let format = options.pixelFormat ?? .yuv420p
        guard let frameBytes = format.frameSize(width: size.width, height: size.height) else {
            throw SwiftRecordError(.invalidArgument, operation: name, message: "size \(size) is out of range for \(format)")
        }
        var info = RawVideoStreamInfo(container: .raw, size: size, pixelFormat: format, frameRate: defaultFrameRate,
                                      frameRateOrigin: "default", frameBytes: frameBytes, frameCount: nil, trailingBytes: 0,
                                      byteCount: stream.length, y4mHeader: nil)
        let what = "\(size) \(format) frames of \(frameBytes) bytes"
        if let length = stream.length {
            if length == 0 {
                throw SwiftRecordError(.invalidData, operation: name, message: "is empty; expected \(what)")
            }
            let whole = Int(length / Int64(frameBytes)), left = Int(length % Int64(frameBytes))
            if whole == 0 {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "holds \(length) bytes, less than one \(size) \(format) frame (\(frameBytes) bytes): no frame to convert; check --size and --pix-fmt")
            }
            if left != 0 && !options.allowPartial {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "\(length) bytes is not a whole number of \(what): \(whole) whole frame\(whole == 1 ? "" : "s") fit and \(left) bytes are left over; check --size and --pix-fmt, or pass --allow-partial to convert the \(whole) whole frame\(whole == 1 ? "" : "s")")
            }
            info.frameCount = whole
            info.trailingBytes = left
        } else if empty {
            throw SwiftRecordError(.invalidData, operation: name, message: "is empty; expected \(what)")
        }
        return info
    }

    private static func openY4M(_ stream: RawInputStream, name: String, options: Options) throws(SwiftRecordError) -> RawVideoStreamInfo {
        let (line, terminated) = try stream.readLine(maximum: Y4MStreamHeader.maximumLineLength)
        guard terminated else {
            let why = line.count >= Y4MStreamHeader.maximumLineLength
                ? "is longer than \(Y4MStreamHeader.maximumLineLength) bytes"
                : "is truncated: the input ends after \(line.count) bytes, before the end of the header line"
            throw SwiftRecordError(.invalidData, operation: "\(name): YUV4MPEG2 header", message: "the header line \(why)")
        }
        let header: Y4MStreamHeader
        do {
            header = try Y4MStreamHeader.parse(line: line, length: line.count + 1)
        } catch {
            throw SwiftRecordError(error.kind, operation: "\(name): \(error.operation)", message: error.message)
        }
        let size = VideoSize(width: header.width, height: header.height)
        guard let frameBytes = header.pixelFormat.frameSize(width: header.width, height: header.height) else {
            throw SwiftRecordError(.invalidData, operation: "\(name): YUV4MPEG2 header", message: "size \(size) is out of range")
        }
        var info = RawVideoStreamInfo(container: .y4m, size: size, pixelFormat: header.pixelFormat,
                                      frameRate: header.frameRate ?? defaultFrameRate, frameRateOrigin: header.frameRate == nil ? "default" : "header",
                                      frameBytes: frameBytes, frameCount: nil, trailingBytes: 0, byteCount: stream.length, y4mHeader: header)
        if let length = stream.length {
            let (count, trailing) = try scanFrames(stream, name: name, from: Int64(header.length), length: length, frameBytes: frameBytes)
            let what = "\(size) \(header.pixelFormat) frames (\(frameBytes) bytes each after its FRAME line)"
            if count == 0 && trailing == 0 {
                throw SwiftRecordError(.invalidData, operation: name, message: "has a YUV4MPEG2 header but no frames")
            }
            if count == 0 {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "holds no whole frame: \(trailing) bytes after the header, less than one of its \(what)")
            }
            if trailing != 0 && !options.allowPartial {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "ends inside a frame: \(count) whole \(what) and \(trailing) bytes left over; pass --allow-partial to convert the \(count) whole frame\(count == 1 ? "" : "s")")
            }
            info.frameCount = count
            info.trailingBytes = trailing
        }
        return info
    }

    /// Visits every FRAME line of a Y4M file: counts whole frames and measures an incomplete tail.
    private static func scanFrames(_ stream: RawInputStream, name: String, from start: Int64, length: Int64,
                                   frameBytes: Int) throws(SwiftRecordError) -> (Int, Int) {
        var offset = start
        var count = 0
        while offset < length {
            let head = try stream.bytes(at: offset, count: 6)
            let headerLength: Int
            if head.count == 6 && head.starts(with: Y4MStreamHeader.frameSignature) && head[5] == UInt8(ascii: "\n") {
                headerLength = 6
            } else if head.count == 6 && head.starts(with: Y4MStreamHeader.frameSignature) && head[5] == UInt8(ascii: " ") {
                let line = try stream.bytes(at: offset, count: Y4MStreamHeader.maximumLineLength)
                guard let nl = line.firstIndex(of: UInt8(ascii: "\n")) else {
                    if line.count < Y4MStreamHeader.maximumLineLength { return (count, Int(length - offset)) }
                    throw SwiftRecordError(.invalidData, operation: name,
                                           message: "frame \(count + 1) at byte \(offset): the FRAME line is longer than \(Y4MStreamHeader.maximumLineLength) bytes")
                }
                headerLength = nl + 1
            } else if head.count < 6 && Y4MStreamHeader.frameSignature.starts(with: head.prefix(5)) {
                return (count, Int(length - offset))
            } else {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "frame \(count + 1) at byte \(offset): expected a FRAME line, found '\(printable(head))'; the header's size or colour space may not match the data")
            }
            if offset + Int64(headerLength) + Int64(frameBytes) > length {
                return (count, Int(length - offset))
            }
            offset += Int64(headerLength) + Int64(frameBytes)
            count += 1
        }
        return (count, 0)
    }

    /// Delivers frames in buffers of `size` (at least the picture's), the picture in the
    /// top-left corner and its last column and row repeated over the rest. Only before
    /// the first frame is read.
    public func setCanvasSize(_ size: VideoSize) throws(SwiftRecordError) {
        try lock.withLock { () throws(SwiftRecordError) in
            guard next == 0, !ended else {
                throw SwiftRecordError(.invalidState, operation: "RawVideoFileSource.setCanvasSize", message: "frames have already been read")
            }
            guard size.width >= info.size.width, size.height >= info.size.height else {
                throw SwiftRecordError(.invalidArgument, operation: "RawVideoFileSource.setCanvasSize",
                                       message: "canvas \(size) is smaller than the \(info.size) picture")
            }
            canvas = size
        }
    }

    public func start() throws {}

    public func stop() {
        lock.withLock {
            ended = true
            stream.close()
        }
    }

    /// Reads a FRAME line; false at the clean end of the input.
    private func readFrameHeader() throws(SwiftRecordError) -> Bool {
        let line = try stream.readSmall(6)
        let n = line.count
        if n == 0 { return false }
        if n == 6 && line.starts(with: Y4MStreamHeader.frameSignature) && line[5] == UInt8(ascii: "\n") { return true }
        let head = Array(line)
        let name = stream.name
        if n < 6 {
            guard Y4MStreamHeader.frameSignature.starts(with: head.prefix(min(n, 5))) else {
                throw SwiftRecordError(.invalidData, operation: name,
                                       message: "frame \(next + 1): expected a FRAME line, found '\(RawVideoFileSource.printable(Array(head.prefix(n))))'")
            }
            try partial(n, what: "a FRAME line")
            return false
        }
        guard head.starts(with: Y4MStreamHeader.frameSignature), head[5] == UInt8(ascii: "\n") || head[5] == UInt8(ascii: " ") else {
            throw SwiftRecordError(.invalidData, operation: name,
                                   message: "frame \(next + 1): expected a FRAME line, found '\(RawVideoFileSource.printable(head))'; the header's size or colour space may not match the data")
        }
        if head[5] == UInt8(ascii: " ") {
            // Frame parameters (per-frame interlacing, extensions): skipped.
            let (line, terminated) = try stream.readLine(maximum: Y4MStreamHeader.maximumLineLength)
            if !terminated {
                if line.count >= Y4MStreamHeader.maximumLineLength {
                    throw SwiftRecordError(.invalidData, operation: name,
                                           message: "frame \(next + 1): the FRAME line is longer than \(Y4MStreamHeader.maximumLineLength) bytes")
                }
                try partial(6 + line.count, what: "a FRAME line")
                return false
            }
        }
        return true
    }

    /// An input that ends inside a frame: skipped with `allowPartial`, else an error.
    private func partial(_ bytes: Int, what: String) throws(SwiftRecordError) {
        if options.allowPartial {
            storedTrailingBytes = bytes
            ended = true
            return
        }
        throw SwiftRecordError(.invalidData, operation: stream.name,
                               message: "ends inside frame \(next + 1): \(bytes) bytes of \(what) (\(info.size) \(info.pixelFormat) frames are \(info.frameBytes) bytes) after \(next) whole frame\(next == 1 ? "" : "s"); check --size and --pix-fmt, or pass --allow-partial to convert the whole frames")
    }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        try lock.withLock { () throws(SwiftRecordError) -> CapturedFrame? in try readFrame(from: pool) }
    }

    private func readFrame(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame? {
        if ended { return nil }
        if let total = info.frameCount, next >= total { ended = true; return nil }
        if let limit = options.maximumFrames, next >= limit { ended = true; return nil }
        guard pool.width == canvas.width, pool.height == canvas.height, pool.pixelFormat == pixelFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "RawVideoFileSource.nextFrame",
                                   message: "the pool makes \(pool.width)x\(pool.height) \(pool.pixelFormat) buffers; this source fills \(canvas) \(pixelFormat)")
        }
        if info.container == .y4m {
            guard try readFrameHeader() else { ended = true; return nil }
        }
        let buffer = try pool.makePixelBuffer()
        let format = pixelFormat
        let size = info.size
        let order = info.pixelFormat.filePlaneOrder
        let got = try buffer.withWriteAccess { (planes: [PixelPlane]) throws(SwiftRecordError) -> Int in
            try stream.read { add in
                for p in order where p < planes.count {
                    let plane = planes[p]
                    let rowBytes = format.tightBytesPerRow(width: size.width, plane: p)
                    let rows = format.planeHeight(size.height, plane: p)
                    if plane.bytesPerRow == rowBytes {
                        add(plane.baseAddress, rowBytes * rows)    // rows back to back: one piece
                    } else {
                        for row in 0..<rows { add(plane.baseAddress + row * plane.bytesPerRow, rowBytes) }
                    }
                }
            }
        }
        if got < info.frameBytes {
            if got == 0 && info.container == .raw { ended = true; return nil }
            try partial(got, what: "picture data")
            return nil
        }
        if canvas != size {
            buffer.extendEdges(contentWidth: size.width, contentHeight: size.height)
        }
        let index = next
        next += 1
        let rate = info.frameRate
        return CapturedFrame(pixelBuffer: buffer,
                             captureTime: MediaTime(value: Int64(index) * Int64(rate.denominator), timescale: rate.numerator),
                             index: index)
    }
}
