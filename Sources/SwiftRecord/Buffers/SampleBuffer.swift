/// A picture with its presentation time: what an `AssetWriterInput` takes.
///
/// The counterpart of `CMSampleBuffer` (for video) on Apple platforms.
public struct SampleBuffer: Sendable {
    /// The picture (`CMSampleBufferGetImageBuffer`).
    public let pixelBuffer: PixelBuffer
    /// When this picture is shown, on the source's timeline (`CMSampleBufferGetPresentationTimeStamp`).
    public let presentationTimeStamp: MediaTime

    /// A picture shown at `presentationTimeStamp`.
    public init(pixelBuffer: PixelBuffer, presentationTimeStamp: MediaTime) {
        self.pixelBuffer = pixelBuffer
        self.presentationTimeStamp = presentationTimeStamp
    }
}

/// Size and pixel format of the buffers a `PixelBufferAdaptor` will be given
/// (`sourcePixelBufferAttributes` with `kCVPixelBufferPixelFormatTypeKey`,
/// `kCVPixelBufferWidthKey`, `kCVPixelBufferHeightKey`).
public struct PixelBufferAttributes: Sendable, Hashable {
    /// Width of the buffers in pixels (`kCVPixelBufferWidthKey`).
    public var width: Int
    /// Height of the buffers in pixels (`kCVPixelBufferHeightKey`).
    public var height: Int
    /// Pixel format of the buffers (`kCVPixelBufferPixelFormatTypeKey`).
    public var pixelFormat: PixelFormat
    /// Whether the buffers hold full-range YUV (`420f` rather than `420v`); see
    /// ``PixelBuffer/isFullRange``.
    public var isFullRange = false

    /// Attributes of `width`×`height` buffers in `pixelFormat`.
    public init(width: Int, height: Int, pixelFormat: PixelFormat) {
        (self.width, self.height, self.pixelFormat) = (width, height, pixelFormat)
    }
}
