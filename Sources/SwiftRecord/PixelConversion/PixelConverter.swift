internal import CFFmpeg

/// Converts and scales pictures from one size and format to another. 32-bit RGB to
/// yuv420p at the same size (screen capture) goes through the one-pass SIMD converter
/// (`RGBToYUV420`) in release builds; everything else (scaling, other formats, debug
/// builds) through libswscale (`ScaleContext`). RGB is converted to YUV with the
/// destination's colour matrix and range (BT.709 limited by default), so colours survive
/// the trip into the encoder.
///
/// Not `Sendable`: a swscale context serves one conversion at a time, so a converter
/// belongs to the one object that calls it (a pixel buffer adaptor, a `RegionConverter`).
final class PixelConverter {
    let sourceWidth: Int, sourceHeight: Int, sourceFormat: PixelFormat
    let destinationWidth: Int, destinationHeight: Int, destinationFormat: PixelFormat
    private let context: ScaleContext?
    /// The one-pass path for 32-bit RGB to yuv420p at the same size (screen capture), used instead of swscale.
    private let direct: RGBToYUV420?

    /// Scaling quality: bilinear is what screen recorders use; it keeps text legible at
    /// half the cost of bicubic. Pure format changes use no filter at all.
    static func flags(scaling: Bool) -> Int32 {
        scaling ? sr_sws_bilinear() : sr_sws_point()
    }

    init(sourceWidth: Int, sourceHeight: Int, sourceFormat: PixelFormat,
         destinationWidth: Int, destinationHeight: Int, destinationFormat: PixelFormat,
         color: ColorProperties = .bt709, sourceFullRange: Bool? = nil) throws(SwiftRecordError) {
        let scaling = sourceWidth != destinationWidth || sourceHeight != destinationHeight
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.sourceFormat = sourceFormat
        self.destinationWidth = destinationWidth
        self.destinationHeight = destinationHeight
        self.destinationFormat = destinationFormat
        direct = scaling || !RGBToYUV420.isFastInThisBuild ? nil
            : RGBToYUV420(source: sourceFormat, destination: destinationFormat, color: color)
        if direct != nil {
            context = nil
            return
        }
        context = try ScaleContext(from: VideoSize(width: sourceWidth, height: sourceHeight), sourceFormat,
                                   to: VideoSize(width: destinationWidth, height: destinationHeight), destinationFormat,
                                   flags: PixelConverter.flags(scaling: scaling), color: color, sourceFullRange: sourceFullRange)
    }

    func matches(_ source: PixelBuffer) -> Bool {
        source.width == sourceWidth && source.height == sourceHeight && source.pixelFormat == sourceFormat
    }

    /// Converts `source` into `destination` (sizes and formats as set up).
    func convert(_ source: PixelBuffer, into destination: PixelBuffer) throws(SwiftRecordError) {
        guard source !== destination else {
            throw SwiftRecordError(.invalidArgument, operation: "convert", message: "the source and the destination are the same buffer")
        }
        guard matches(source) else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "convert",
                                   message: "source is \(source.width)x\(source.height) \(source.pixelFormat), expected \(sourceWidth)x\(sourceHeight) \(sourceFormat)")
        }
        if let direct {
            destination.withWriteAccess { dst in
                source.withReadAccess { src in
                    direct.convert(source: src[0], luma: dst[0], cb: dst[1], cr: dst[2], width: sourceWidth, height: sourceHeight)
                }
            }
            return
        }
        guard let context else {
            throw SwiftRecordError(.invalidState, operation: "convert", message: "no conversion context")
        }
        _ = try source.withFrame { (src) throws(SwiftRecordError) in
            try destination.withWritableFrame { (dst) throws(SwiftRecordError) in
                try context.scale(src, height: sourceHeight, into: dst)
            }
        }
    }
}
