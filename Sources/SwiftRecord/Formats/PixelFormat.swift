internal import CFFmpeg

/// The layout of a pixel buffer's samples. Names follow FFmpeg's `-pix_fmt` names.
///
/// The counterpart of `kCVPixelFormatType_*` (`OSType`) on Apple platforms:
/// `yuv420p` is `kCVPixelFormatType_420YpCbCr8Planar`, `nv12` is
/// `kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange`, `bgra` is `kCVPixelFormatType_32BGRA`,
/// `argb` is `kCVPixelFormatType_32ARGB`.
public enum PixelFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case yuv420p, nv12, nv21, yuv422p, yuv444p, yuyv422, uyvy422, gray
    case bgra, rgba, bgr0, rgb24, argb, yuv420p10le, yuv422p10le, yuv444p10le

    var av: AVPixelFormat {
        switch self {
        case .yuv420p: return AV_PIX_FMT_YUV420P
        case .nv12: return AV_PIX_FMT_NV12
        case .nv21: return AV_PIX_FMT_NV21
        case .yuv422p: return AV_PIX_FMT_YUV422P
        case .yuv444p: return AV_PIX_FMT_YUV444P
        case .yuyv422: return AV_PIX_FMT_YUYV422
        case .uyvy422: return AV_PIX_FMT_UYVY422
        case .gray: return AV_PIX_FMT_GRAY8
        case .bgra: return AV_PIX_FMT_BGRA
        case .rgba: return AV_PIX_FMT_RGBA
        case .bgr0: return AV_PIX_FMT_BGR0
        case .rgb24: return AV_PIX_FMT_RGB24
        case .argb: return AV_PIX_FMT_ARGB
        case .yuv420p10le: return AV_PIX_FMT_YUV420P10LE
        case .yuv422p10le: return AV_PIX_FMT_YUV422P10LE
        case .yuv444p10le: return AV_PIX_FMT_YUV444P10LE
        }
    }

    init?(av: AVPixelFormat) {
        guard let f = PixelFormat.allCases.first(where: { $0.av == av }) else { return nil }
        self = f
    }

    public var description: String { rawValue }

    private var descriptor: UnsafePointer<AVPixFmtDescriptor>? { av_pix_fmt_desc_get(av) }

    /// Number of planes (1 for packed formats such as bgra).
    public var planeCount: Int { Int(av_pix_fmt_count_planes(av)) }

    /// True for RGB formats (bgra, rgba, rgb24, …), false for YUV and gray.
    public var isRGB: Bool {
        guard let d = descriptor else { return false }
        return (d.pointee.flags & UInt64(sr_pix_fmt_flag_rgb())) != 0
    }

    /// Log2 of the horizontal and vertical chroma subsampling (1,1 for 4:2:0).
    public var chromaShift: (x: Int, y: Int) {
        guard let d = descriptor else { return (0, 0) }
        return (Int(d.pointee.log2_chroma_w), Int(d.pointee.log2_chroma_h))
    }

    /// Bytes of one frame of `width`×`height` stored tightly (no row padding), chroma
    /// planes rounded up for odd sizes, as raw video files store them. Nil on overflow
    /// or for a size FFmpeg refuses.
    public func tightFrameSize(width: Int, height: Int) -> Int? {
        guard width > 0, height > 0, width <= 1 << 16, height <= 1 << 16 else { return nil }
        _ = FFmpegLog.configure
        let size = av_image_get_buffer_size(av, Int32(width), Int32(height), 1)
        return size > 0 ? Int(size) : nil
    }

    /// Bytes per row of each plane when stored tightly.
    public func tightBytesPerRow(width: Int, plane: Int) -> Int {
        Int(av_image_get_linesize(av, Int32(width), Int32(plane)))
    }

    /// Rows of plane `plane` for a picture `height` rows high (chroma rounds up).
    public func planeHeight(_ height: Int, plane: Int) -> Int {
        if plane == 0 || planeCount == 1 { return height }
        let s = chromaShift.y
        return (height + (1 << s) - 1) >> s
    }
}
