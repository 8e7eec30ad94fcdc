/// A picture with its presentation time: what an `AssetWriterInput` takes.
///
/// The counterpart of `CMSampleBuffer` (for video) on Apple platforms.
public struct SampleBuffer: Sendable {
    /// The picture (`CMSampleBufferGetImageBuffer`).
    public let pixelBuffer: PixelBuffer
    /// When this picture is shown, on the source's timeline (`CMSampleBufferGetPresentationTimeStamp`).
    public let presentationTimeStamp: MediaTime
    /// What the capture knew of the picture (a live capture's frames; nil for others): the
    /// attachments of ScreenCaptureKit's sample buffers.
    public var captureInfo: PictureCaptureInfo?

    /// A picture shown at `presentationTimeStamp`.
    public init(pixelBuffer: PixelBuffer, presentationTimeStamp: MediaTime, captureInfo: PictureCaptureInfo? = nil) {
        self.pixelBuffer = pixelBuffer
        self.presentationTimeStamp = presentationTimeStamp
        self.captureInfo = captureInfo
    }
}

/// What a capture knew of one picture: whether it changed, where, and when it was taken.
public struct PictureCaptureInfo: Sendable, Equatable {
    /// The source says the picture is the one it gave last (a still screen).
    public var isUnchanged: Bool
    /// The parts of the picture that changed since the last one, in its pixels; nil when the
    /// source does not know (every part may have).
    public var dirtyRects: [PixelRegion]?
    /// Where the captured content lies in the picture.
    public var contentRect: PixelRegion
    /// When the picture was taken, on the host's monotonic clock.
    public var captureTime: MediaTime

    public init(isUnchanged: Bool, dirtyRects: [PixelRegion]?, contentRect: PixelRegion, captureTime: MediaTime) {
        (self.isUnchanged, self.dirtyRects, self.contentRect, self.captureTime) = (isUnchanged, dirtyRects, contentRect, captureTime)
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
