/// Converts pictures of one size and format into new buffers of another (scaled with a
/// bilinear filter, RGB to YUV with BT.709): what a capture stream's configured size and
/// pixel format ask of the source's pictures. One conversion at a time (a lock).
public final class PictureConverter: Sendable {
    /// How a picture of another size is put into the converted one.
    public enum Placement: Sendable {
        /// Scaled to the converted size (its aspect ratio may change).
        case scaled
        /// At its own size in the top-left corner, the rest black; cut at the right and
        /// bottom edges where it is larger (ScreenCaptureKit's `scalesToFit = false`).
        case unscaledTopLeft
    }
    private let converter: Locked<PixelConverter>
    private let pool: PixelBufferPool
    /// The source-sized picture in the converted format, for `.unscaledTopLeft` (nil when
    /// the source's format is already the converted one).
    private let sourceSized: PixelBufferPool?
    private let placement: Placement
    /// What the converted pictures are.
    public let size: VideoSize, pixelFormat: PixelFormat

    /// A converter from `source`-sized `sourceFormat` pictures to `size` and `pixelFormat`,
    /// keeping at most `bufferCount` converted pictures alive at once.
    public init(from source: VideoSize, _ sourceFormat: PixelFormat, to size: VideoSize, _ pixelFormat: PixelFormat,
                bufferCount: Int = 8, placement: Placement = .scaled) throws(SwiftRecordError) {
        let converted = placement == .scaled ? size : source
        let c = try PixelConverter(sourceWidth: source.width, sourceHeight: source.height, sourceFormat: sourceFormat,
                                   destinationWidth: converted.width, destinationHeight: converted.height, destinationFormat: pixelFormat)
        converter = Locked(c)
        pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: pixelFormat, maximumBufferCount: bufferCount)
        sourceSized = placement == .scaled || sourceFormat == pixelFormat ? nil
            : try PixelBufferPool(width: source.width, height: source.height, pixelFormat: pixelFormat, maximumBufferCount: 1)
        (self.size, self.pixelFormat, self.placement) = (size, pixelFormat, placement)
    }

    /// `picture` converted into a new buffer.
    public func convert(_ picture: PixelBuffer) throws(SwiftRecordError) -> PixelBuffer {
        guard placement == .unscaledTopLeft else {
            let out = try pool.makePixelBuffer()
            try converter.withLock { (c: inout PixelConverter) throws(SwiftRecordError) in try c.convert(picture, into: out) }
            return out
        }
        let out = try PixelBuffer.black(from: pool)
        return try converter.withLock { (c: inout PixelConverter) throws(SwiftRecordError) -> PixelBuffer in
            var inFormat = picture
            if let sourceSized {
                inFormat = try sourceSized.makePixelBuffer()
                try c.convert(picture, into: inFormat)
            }
            inFormat.withReadAccess { from in
                out.withWriteAccess { to in
                    for (f, t) in zip(from, to) {
                        let length = min(f.rowLength, t.rowLength)
                        for row in 0..<min(f.height, t.height) {
                            (t.baseAddress + row * t.bytesPerRow).copyMemory(from: f.baseAddress + row * f.bytesPerRow, byteCount: length)
                        }
                    }
                }
            }
            return out
        }
    }
}
