/// A picture with its presentation time: what an `AssetWriterInput` takes.
///
/// The counterpart of `CMSampleBuffer` (for video) on Apple platforms.
public struct SampleBuffer: Sendable {
    public let pixelBuffer: PixelBuffer
    /// When this picture is shown, on the source's timeline (`CMSampleBufferGetPresentationTimeStamp`).
    public let presentationTimeStamp: MediaTime

    public init(pixelBuffer: PixelBuffer, presentationTimeStamp: MediaTime) {
        self.pixelBuffer = pixelBuffer
        self.presentationTimeStamp = presentationTimeStamp
    }
}

/// Size and pixel format of the buffers a `PixelBufferAdaptor` will be given
/// (`sourcePixelBufferAttributes` with `kCVPixelBufferPixelFormatTypeKey`,
/// `kCVPixelBufferWidthKey`, `kCVPixelBufferHeightKey`).
public struct PixelBufferAttributes: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat

    public init(width: Int, height: Int, pixelFormat: PixelFormat) {
        (self.width, self.height, self.pixelFormat) = (width, height, pixelFormat)
    }
}
