internal import CFFmpeg

/// Converts and scales pictures with libswscale, from one size and format to
/// another. RGB is converted to YUV with the destination's colour matrix and range
/// (BT.709 limited by default), so colours survive the trip into the encoder.
final class PixelConverter: @unchecked Sendable {
    let sourceWidth: Int, sourceHeight: Int, sourceFormat: PixelFormat
    let destinationWidth: Int, destinationHeight: Int, destinationFormat: PixelFormat
    private let context: OpaquePointer?
    /// The one-pass path for 32-bit RGB to yuv420p at the same size (screen capture), used instead of swscale.
    private let direct: RGBToYUV420?

    /// Scaling quality: bilinear is what screen recorders use; it keeps text legible at
    /// half the cost of bicubic. Pure format changes use no filter at all.
    static func flags(scaling: Bool) -> Int32 {
        scaling ? sr_sws_bilinear() : sr_sws_point()
    }

    init(sourceWidth: Int, sourceHeight: Int, sourceFormat: PixelFormat,
         destinationWidth: Int, destinationHeight: Int, destinationFormat: PixelFormat,
         color: ColorProperties = .bt709) throws(SwiftRecordError) {
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
        guard let ctx = sws_getContext(Int32(sourceWidth), Int32(sourceHeight), sourceFormat.av,
                                       Int32(destinationWidth), Int32(destinationHeight), destinationFormat.av,
                                       PixelConverter.flags(scaling: scaling), nil, nil, nil) else {
            throw SwiftRecordError(.unsupported, operation: "sws_getContext",
                                   message: "cannot convert \(sourceWidth)x\(sourceHeight) \(sourceFormat) to \(destinationWidth)x\(destinationHeight) \(destinationFormat)")
        }
        context = ctx
        // RGB sources are full range; YUV sources are taken to be in the output's range.
        let srcFull: Int32 = sourceFormat.isRGB ? 1 : (color.fullRange ? 1 : 0)
        let dstFull: Int32 = destinationFormat.isRGB ? 1 : (color.fullRange ? 1 : 0)
        let coeffs = sws_getCoefficients(color.swsCoefficients)
        _ = sws_setColorspaceDetails(ctx, coeffs, srcFull, coeffs, dstFull, 0, 1 << 16, 1 << 16)
    }

    deinit {
        if let context { sws_freeContext(context) }
    }

    func matches(_ source: PixelBuffer) -> Bool {
        source.width == sourceWidth && source.height == sourceHeight && source.pixelFormat == sourceFormat
    }

    /// Converts `source` into `destination` (sizes and formats as set up).
    func convert(_ source: PixelBuffer, into destination: PixelBuffer) throws(SwiftRecordError) {
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
        try destination.withWriteAccess { (_: [PixelPlane]) throws(SwiftRecordError) in
            let r = sws_scale(context, sr_frame_const_data_array(source.frame), sr_frame_linesize_array(source.frame),
                              0, Int32(sourceHeight),
                              sr_frame_data_array(destination.frame), sr_frame_linesize_array(destination.frame))
            try check(r, "sws_scale")
        }
    }
}
