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

/// The one owner of a libswscale context (`SwsContext`): made in `init`, freed in `deinit`.
/// Every conversion through libswscale (the adaptor's `PixelConverter`, `FrameTransform`,
/// `MediaFileReader`'s gray pictures) holds one of these and calls `scale`.
///
/// Not `Sendable`: a context serves one conversion at a time, for the one object that holds it.
/// `package`: the Wayland source letterboxes a monitor that changed size through one.
package final class ScaleContext {
    private let context: OpaquePointer

    /// From one size and pixel format to another, with the colour matrix and ranges of
    /// `color` set: RGB is full range; YUV keeps the range it is tagged with on both sides,
    /// unless `sourceFullRange` says what the source's is (a `420f` picture into a
    /// video-range encoder).
    package convenience init(from sourceSize: VideoSize, _ sourceFormat: PixelFormat, to destinationSize: VideoSize,
                             _ destinationFormat: PixelFormat, flags: Int32 = ScaleContext.bilinear,
                             color: ColorProperties = .bt709, sourceFullRange: Bool? = nil) throws(SwiftRecordError) {
        let sourceFull: Int32 = sourceFormat.isRGB || (sourceFullRange ?? color.fullRange) ? 1 : 0
        let destinationFull: Int32 = destinationFormat.isRGB || color.fullRange ? 1 : 0
        // swscale picks its unscaled YUV-to-YUV copies when it is set up, with both ranges
        // equal unless told otherwise then: a YUV range to change must be known at set-up.
        try self.init(from: sourceSize, sourceFormat.av, to: destinationSize, destinationFormat.av, flags: flags,
                      ranges: sourceFull != destinationFull && !sourceFormat.isRGB && !destinationFormat.isRGB ? (sourceFull, destinationFull) : nil,
                      describe: "\(sourceSize) \(sourceFormat) to \(destinationSize) \(destinationFormat)")
        let coefficients = sws_getCoefficients(color.swscaleColorspace)
        // Brightness 0, contrast and saturation 1.0 (16.16 fixed point). The result only says
        // whether swscale uses the tables for this pair of formats (a YUV to YUV copy does
        // not), which is no failure, so it is not checked.
        _ = sws_setColorspaceDetails(context, coefficients, sourceFull, coefficients, destinationFull, 0, 1 << 16, 1 << 16)
    }

    /// Between FFmpeg's own pixel formats (a decoder's pictures), with libswscale's default colours.
    init(from sourceSize: VideoSize, _ sourceFormat: AVPixelFormat, to destinationSize: VideoSize,
         _ destinationFormat: AVPixelFormat, flags: Int32, ranges: (source: Int32, destination: Int32)? = nil,
         describe: @autoclosure () -> String) throws(SwiftRecordError) {
        if let ranges {
            guard let context = sws_alloc_context() else {
                throw SwiftRecordError(.ffmpeg, operation: "sws_alloc_context", message: "out of memory")
            }
            let options: [(String, Int64)] = [
                ("srcw", Int64(sourceSize.width)), ("srch", Int64(sourceSize.height)), ("src_format", Int64(sourceFormat.rawValue)),
                ("dstw", Int64(destinationSize.width)), ("dsth", Int64(destinationSize.height)), ("dst_format", Int64(destinationFormat.rawValue)),
                ("sws_flags", Int64(flags)), ("src_range", Int64(ranges.source)), ("dst_range", Int64(ranges.destination)),
            ]
            for (name, value) in options { _ = av_opt_set_int(UnsafeMutableRawPointer(context), name, value, 0) }
            guard sws_init_context(context, nil, nil) >= 0 else {
                sws_freeContext(context)
                throw SwiftRecordError(.unsupported, operation: "sws_init_context", message: "cannot convert \(describe())")
            }
            self.context = context
            return
        }
        guard let context = sws_getContext(Int32(sourceSize.width), Int32(sourceSize.height), sourceFormat,
                                           Int32(destinationSize.width), Int32(destinationSize.height), destinationFormat,
                                           flags, nil, nil, nil) else {
            throw SwiftRecordError(.unsupported, operation: "sws_getContext", message: "cannot convert \(describe())")
        }
        self.context = context
    }

    deinit { sws_freeContext(context) }

    /// Reads YUV with the colour matrix a decoded `frame` is tagged with (BT.601 when
    /// untagged, as FFmpeg does) and, when it says so, as full range; the destination keeps
    /// libswscale's range for its format (full for RGB and gray). What `ffmpeg`'s scale
    /// filter does with a decoder's frames.
    func useColors(of frame: UnsafePointer<AVFrame>) {
        let table: Int32
        switch frame.pointee.colorspace {
        case AVCOL_SPC_BT709: table = sr_sws_cs_itu709()
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: table = sr_sws_cs_bt2020()
        default: table = sr_sws_cs_itu601()
        }
        var inverse: UnsafeMutablePointer<Int32>?, forward: UnsafeMutablePointer<Int32>?
        var sourceFull: Int32 = 0, destinationFull: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        guard sws_getColorspaceDetails(context, &inverse, &sourceFull, &forward, &destinationFull, &brightness, &contrast, &saturation) >= 0 else {
            return   // not a YUV or RGB conversion: no tables to set
        }
        if frame.pointee.color_range == AVCOL_RANGE_JPEG { sourceFull = 1 }
        let coefficients = sws_getCoefficients(table)
        // As in the initialiser above: the result only says whether the tables are used.
        _ = sws_setColorspaceDetails(context, coefficients, sourceFull, coefficients, destinationFull, brightness, contrast, saturation)
    }

    /// libswscale's bilinear filter (`SWS_BILINEAR`).
    package static var bilinear: Int32 { sr_sws_bilinear() }

    /// Converts `height` rows of the source planes into the destination planes (`sws_scale`).
    package func scale(_ sourcePlanes: UnsafePointer<UnsafePointer<UInt8>?>, _ sourceStrides: UnsafePointer<Int32>, height: Int,
               into destinationPlanes: UnsafePointer<UnsafeMutablePointer<UInt8>?>, _ destinationStrides: UnsafePointer<Int32>,
               operation: String = "sws_scale") throws(SwiftRecordError) {
        try check(sws_scale(context, sourcePlanes, sourceStrides, 0, Int32(height), destinationPlanes, destinationStrides), operation)
    }

    /// Converts the picture of `source` into `destination`'s planes.
    func scale(_ source: UnsafeMutablePointer<AVFrame>, height: Int, into destination: UnsafeMutablePointer<AVFrame>,
               operation: String = "sws_scale") throws(SwiftRecordError) {
        try scale(sr_frame_const_data_array(source), sr_frame_linesize_array(source), height: height,
                  into: sr_frame_data_array(destination), sr_frame_linesize_array(destination), operation: operation)
    }
}
