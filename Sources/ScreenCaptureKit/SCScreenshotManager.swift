import CoreMedia
import CoreVideo
import Foundation
import SwiftRecord
import SwiftRecordX11

/// Single pictures of a filter's content.
public enum SCScreenshotManager {
    /// One picture of the content, as the configuration sets its size and pixel format.
    /// Apple's gives a `CGImage`; Linux has no CoreGraphics: the picture is a `CVPixelBuffer`.
    public static func captureImage(contentFilter: SCContentFilter, configuration: SCStreamConfiguration) async throws -> CVPixelBuffer {
        try await captureSampleBuffer(contentFilter: contentFilter, configuration: configuration).pixelBuffer ?? {
            throw SwiftRecordError(.io, operation: "SCScreenshotManager", message: "the capture gave no picture")
        }()
    }

    /// One picture of the content in a sample buffer with its attachments.
    public static func captureSampleBuffer(contentFilter: SCContentFilter, configuration: SCStreamConfiguration) async throws -> CMSampleBuffer {
        let c = configuration
        let source = try contentFilter.makeSource(showsCursor: c.showsCursor, sourceRect: c.sourceRect, method: .full)
        guard let (format, _) = FourCC.format(c.pixelFormat) else {
            throw SwiftRecordError(.invalidArgument, operation: "SCStreamConfiguration.pixelFormat",
                                   message: "pixel format \(FourCC.name(c.pixelFormat)) is not supported; use kCVPixelFormatType_32BGRA or _420YpCbCr8Planar")
        }
        let made = Locked<CMSampleBuffer?>(nil)
        try await ThreadTask().run(name: "SCScreenshotManager") {
            try source.start()
            defer { source.stop() }
            let native = source.nativeSize
            let pool = try PixelBufferPool(width: native.width, height: native.height, pixelFormat: source.pixelFormat, maximumBufferCount: 2)
            guard let frame = try source.nextFrame(from: pool) else { return }
            let size = VideoSize(width: c.width > 0 ? c.width : native.width, height: c.height > 0 ? c.height : native.height)
            let picture = size == native && format == source.pixelFormat ? frame.pixelBuffer
                : try PictureConverter(from: native, source.pixelFormat, to: size, format, bufferCount: 1,
                                       placement: c.scalesToFit ? .scaled : .unscaledTopLeft).convert(frame.pixelBuffer)
            let content = c.scalesToFit ? size : VideoSize(width: min(native.width, size.width), height: min(native.height, size.height))
            let info = PictureCaptureInfo(isUnchanged: false, dirtyRects: nil, contentRect: PixelRegion(x: 0, y: 0, width: content.width, height: content.height),
                                          captureTime: frame.captureTime)
            made.withLock { $0 = .video(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: frame.captureTime, captureInfo: info)) }
        }
        guard let sample = made.withLock({ $0 }) else {
            throw SwiftRecordError(.io, operation: "SCScreenshotManager", message: "the capture gave no picture")
        }
        return sample
    }
}
