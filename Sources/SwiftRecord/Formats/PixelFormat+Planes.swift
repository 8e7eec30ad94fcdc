internal import CFFmpeg

/// How a format lays out its samples in planes, read from FFmpeg's pixel-format descriptors
/// (for the raw-video readers and the capture sources that copy planes).
extension PixelFormat {
    /// Bytes from one pixel to the next within `plane` (1 for 8-bit planes, 2 for 16-bit
    /// samples and for NV12's interleaved chroma, 3 for rgb24, 4 for bgra).
    func pixelStep(plane: Int) -> Int {
        guard let d = av_pix_fmt_desc_get(av) else { return 1 }
        var step = 1
        for c in 0..<Int(d.pointee.nb_components) {
            if let comp = sr_pix_desc_comp(d, Int32(c))?.pointee, Int(comp.plane) == plane {
                step = max(step, Int(comp.step))
            }
        }
        // Packed 4:2:2 (yuyv, uyvy): a macropixel of two pixels takes 4 bytes.
        if planeCount == 1 && chromaShift.x == 1 { return 2 }
        return step
    }

    /// True for packed 4:2:2 (yuyv422, uyvy422), where two pixels share one chroma pair.
    var isPacked422: Bool { planeCount == 1 && chromaShift.x == 1 && !isRGB }

    /// Byte offset of the luma sample within a packed 4:2:2 pixel pair (yuyv: 0, uyvy: 1).
    var packedLumaOffset: Int {
        guard let d = av_pix_fmt_desc_get(av), let luma = sr_pix_desc_comp(d, 0) else { return 0 }
        return Int(luma.pointee.offset)
    }

    /// Pixels across plane `plane` for a picture `width` pixels wide (chroma rounds up).
    func planeWidth(_ width: Int, plane: Int) -> Int {
        if plane == 0 || planeCount == 1 { return width }
        let s = chromaShift.x
        return (width + (1 << s) - 1) >> s
    }

    /// The planar format holding the same samples, for encoders that take planes:
    /// nv12/nv21 → yuv420p, yuyv422/uyvy422 → yuv422p; others are themselves.
    var planarEquivalent: PixelFormat {
        switch self {
        case .nv12, .nv21: return .yuv420p
        case .yuyv422, .uyvy422: return .yuv422p
        default: return self
        }
    }
}
