/// Converts pictures of one size and format into new buffers of another (scaled with a
/// bilinear filter, RGB to YUV with BT.709): what a capture stream's configured size and
/// pixel format ask of the source's pictures. One conversion at a time (a lock).
public final class PictureConverter: Sendable {
    private let converter: Locked<PixelConverter>
    private let pool: PixelBufferPool
    /// What the converted pictures are.
    public let size: VideoSize, pixelFormat: PixelFormat

    /// A converter from `source`-sized `sourceFormat` pictures to `size` and `pixelFormat`,
    /// keeping at most `bufferCount` converted pictures alive at once.
    public init(from source: VideoSize, _ sourceFormat: PixelFormat, to size: VideoSize, _ pixelFormat: PixelFormat,
                bufferCount: Int = 8) throws(SwiftRecordError) {
        let c = try PixelConverter(sourceWidth: source.width, sourceHeight: source.height, sourceFormat: sourceFormat,
                                   destinationWidth: size.width, destinationHeight: size.height, destinationFormat: pixelFormat)
        converter = Locked(c)
        pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: pixelFormat, maximumBufferCount: bufferCount)
        (self.size, self.pixelFormat) = (size, pixelFormat)
    }

    /// `picture` converted into a new buffer.
    public func convert(_ picture: PixelBuffer) throws(SwiftRecordError) -> PixelBuffer {
        let out = try pool.makePixelBuffer()
        try converter.withLock { (c: inout PixelConverter) throws(SwiftRecordError) in try c.convert(picture, into: out) }
        return out
    }
}
