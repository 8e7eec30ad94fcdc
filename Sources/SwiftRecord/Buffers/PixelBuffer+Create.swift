internal import CFFmpeg

// Stand-alone buffers, with storage of their own.
extension PixelBuffer {
    /// A stand-alone buffer with storage of its own (`CVPixelBufferCreate`).
    /// Prefer a `PixelBufferPool` for a stream of frames.
    public convenience init(width: Int, height: Int, pixelFormat: PixelFormat) throws(SwiftRecordError) {
        try self.init(width: width, height: height, pixelFormat: pixelFormat, isFullRange: false)
    }

    /// A stand-alone buffer whose YUV samples are full range when `isFullRange`
    /// (`kCVPixelFormatType_420YpCbCr8BiPlanarFullRange`).
    public convenience init(width: Int, height: Int, pixelFormat: PixelFormat, isFullRange: Bool) throws(SwiftRecordError) {
        let allocator = try PlaneAllocator(width: width, height: height, pixelFormat: pixelFormat)
        let frame = try allocator.makeFrame()
        self.init(frame: frame, width: width, height: height, pixelFormat: pixelFormat, isFullRange: isFullRange,
                  allocator: allocator, recycle: nil)
    }
}
