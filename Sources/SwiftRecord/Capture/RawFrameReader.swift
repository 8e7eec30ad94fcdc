/// Reads the frames of a raw video or Y4M input one after another into pooled buffers:
/// the reading half of `RawVideoFileSource`, used with the source's lock held.
///
/// Not `Sendable`: it owns the input stream and its position, so it belongs to one source.
final class RawFrameReader {
    let stream: RawInputStream
    let info: RawVideoStreamInfo
    let pixelFormat: PixelFormat
    let allowPartial: Bool
    let maximumFrames: Int?
    /// Size of the buffers frames are delivered in: the canvas, or the picture size.
    var canvas: VideoSize
    /// Frames delivered so far: the index of the next one.
    private(set) var next = 0
    private(set) var ended = false
    /// Bytes of an incomplete last frame skipped (with `allowPartial`).
    private(set) var trailingBytesSkipped = 0

    init(stream: RawInputStream, info: RawVideoStreamInfo, canvas: VideoSize, allowPartial: Bool, maximumFrames: Int?) {
        self.stream = stream
        self.info = info
        self.pixelFormat = info.pixelFormat.pixelFormat
        self.canvas = canvas
        self.allowPartial = allowPartial
        self.maximumFrames = maximumFrames
    }

    /// Ends reading and closes the input.
    func close() {
        ended = true
        stream.close()
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
        if allowPartial {
            trailingBytesSkipped = bytes
            ended = true
            return
        }
        throw SwiftRecordError(.invalidData, operation: stream.name,
                               message: "ends inside frame \(next + 1): \(bytes) bytes of \(what) (\(info.size) \(info.pixelFormat) frames are \(info.frameBytes) bytes) after \(next) whole frame\(next == 1 ? "" : "s"); check --size and --pix-fmt, or pass --allow-partial to convert the whole frames")
    }

    func readFrame(from pool: PixelBufferPool) throws(SwiftRecordError) -> CapturedFrame? {
        if ended { return nil }
        if let total = info.frameCount, next >= total { ended = true; return nil }
        if let limit = maximumFrames, next >= limit { ended = true; return nil }
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