internal import CFFmpeg

/// How a video track's pictures are to be turned for display: the quarter turns and
/// mirrors of its display matrix (MP4/MOV `tkhd`, read by libavformat as the stream's
/// display-matrix side data). An image generator applies it to the pixels
/// (`appliesPreferredTrackTransform`), as players and `ffmpeg`'s autorotation do.
///
/// The matrix maps a source pixel (x, y), y downwards, to (a·x + c·y, b·x + d·y) plus a
/// translation; here a, b, c, d are each -1, 0 or 1 (16.16 fixed point in the file).
struct PictureOrientation: Equatable {
    let a: Int, b: Int, c: Int, d: Int

    static let identity = PictureOrientation(a: 1, b: 0, c: 0, d: 1)

    /// Whether width and height trade places.
    var swapsSides: Bool { a == 0 }

    /// The orientation of `stream`'s display matrix; identity when there is none, or when
    /// it is not made of quarter turns and mirrors (a skew, a free angle, a scale: left
    /// alone, as the pictures are then shown unturned by this library).
    init(stream: UnsafePointer<AVStream>) {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else {
            self = .identity
            return
        }
        let m = UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self)
        // 16.16 fixed point: 65536 is 1.
        func unit(_ v: Int32) -> Int? {
            switch v {
            case 65536: return 1
            case -65536: return -1
            case 0: return 0
            default: return nil
            }
        }
        guard let a = unit(m[0]), let b = unit(m[1]), let c = unit(m[3]), let d = unit(m[4]),
              (a != 0 && d != 0 && b == 0 && c == 0) || (a == 0 && d == 0 && b != 0 && c != 0) else {
            self = .identity
            return
        }
        self.init(a: a, b: b, c: c, d: d)
    }

    init(a: Int, b: Int, c: Int, d: Int) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
    }

    /// `size` after the turn.
    func apply(to size: VideoSize) -> VideoSize {
        swapsSides ? VideoSize(width: size.height, height: size.width) : size
    }

    /// `source` (a packed format: rgb24, rgba, bgra, …) turned into a new buffer.
    func apply(to source: PixelBuffer) throws(SwiftRecordError) -> PixelBuffer {
        guard self != .identity else { return source }
        guard source.pixelFormat.planeCount == 1 else {
            throw SwiftRecordError(.unsupported, operation: "apply the track's transform",
                                   message: "\(source.pixelFormat) has several planes; expected a packed format such as rgb24")
        }
        let w = source.width, h = source.height
        let out = apply(to: VideoSize(width: w, height: h))
        let result = try PixelBuffer(width: out.width, height: out.height, pixelFormat: source.pixelFormat)
        let bytes = source.pixelFormat.tightBytesPerRow(width: 1, plane: 0)
        // Where a source pixel lands: the matrix's image of the pixel indices, moved so that
        // the smallest corner is at 0.
        let xs = [0, a * (w - 1), c * (h - 1), a * (w - 1) + c * (h - 1)]
        let ys = [0, b * (w - 1), d * (h - 1), b * (w - 1) + d * (h - 1)]
        let dx = -(xs.min() ?? 0), dy = -(ys.min() ?? 0)
        let (a, b, c, d) = (self.a, self.b, self.c, self.d)
        try source.withReadAccess { (src) throws(SwiftRecordError) in
            try result.withWriteAccess { (dst) throws(SwiftRecordError) in
                let s = src[0], t = dst[0]
                let from = s.baseAddress.assumingMemoryBound(to: UInt8.self)
                let to = t.baseAddress.assumingMemoryBound(to: UInt8.self)
                for y in 0..<h {
                    let row = from + y * s.bytesPerRow
                    for x in 0..<w {
                        let X = a * x + c * y + dx, Y = b * x + d * y + dy
                        (to + Y * t.bytesPerRow + X * bytes).update(from: row + x * bytes, count: bytes)
                    }
                }
            }
        }
        return result
    }
}
