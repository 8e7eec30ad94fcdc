internal import CFFmpeg

extension ColorProperties {
    /// libswscale's coefficient table for this colour standard (`SWS_CS_*`).
    var swscaleColorspace: Int32 {
        switch standard {
        case .bt709: return sr_sws_cs_itu709()
        case .bt601: return sr_sws_cs_itu601()
        case .bt2020: return sr_sws_cs_bt2020()
        }
    }
}

/// A libswscale context from one size and pixel format to another, with the colour
/// matrix and ranges of `color` set: RGB is full range; YUV keeps the range it is
/// tagged with on both sides. The caller frees it (`sws_freeContext`).
func makeScaleContext(from sourceSize: VideoSize, _ sourceFormat: PixelFormat, to destinationSize: VideoSize,
                      _ destinationFormat: PixelFormat, flags: Int32, color: ColorProperties) throws(SwiftRecordError) -> OpaquePointer {
    guard let context = sws_getContext(Int32(sourceSize.width), Int32(sourceSize.height), sourceFormat.av,
                                       Int32(destinationSize.width), Int32(destinationSize.height), destinationFormat.av,
                                       flags, nil, nil, nil) else {
        throw SwiftRecordError(.unsupported, operation: "sws_getContext",
                               message: "cannot convert \(sourceSize) \(sourceFormat) to \(destinationSize) \(destinationFormat)")
    }
    let sourceFull: Int32 = sourceFormat.isRGB || color.fullRange ? 1 : 0
    let destinationFull: Int32 = destinationFormat.isRGB || color.fullRange ? 1 : 0
    let coefficients = sws_getCoefficients(color.swscaleColorspace)
    // Brightness 0, contrast and saturation 1.0 (16.16 fixed point). The result only says
    // whether swscale uses the tables for this pair of formats (a YUV to YUV copy does
    // not), which is no failure, so it is not checked.
    _ = sws_setColorspaceDetails(context, coefficients, sourceFull, coefficients, destinationFull, 0, 1 << 16, 1 << 16)
    return context
}
