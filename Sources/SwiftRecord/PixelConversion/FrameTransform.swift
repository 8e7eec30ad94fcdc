internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// The part of the input `convert --crop` keeps.
public typealias CropRegion = PixelRegion

/// Turns a source picture into an encoder's picture: crop, then scale and convert the
/// pixel format (libswscale, one pass), then rotate by quarter turns, then pad to the
/// encoder's size by repeating the last column and row.
///
/// Each step runs only when asked for. Cropping is free (the conversion reads from the
/// crop's corner); with nothing but padding or cropping the samples are copied once.
/// Rotation works on the converted picture's planes, so it is exact.
///
/// Not `Sendable`: the swscale context and the plane arrays handed to it serve one frame
/// at a time, so a transform belongs to the one thread that converts (a conversion's).
final class FrameTransform {
    let sourceSize: VideoSize
    let sourceFormat: PixelFormat
    let crop: CropRegion
    /// Size after scaling, before rotation.
    let scaledSize: VideoSize
    /// Clockwise quarter turns in degrees: 0, 90, 180 or 270.
    let rotation: Int
    /// Mirrored left to right before the rotation (with 180°: a vertical flip).
    let mirrored: Bool
    let destinationFormat: PixelFormat
    /// Size of the picture after rotation, before padding.
    let contentSize: VideoSize
    /// Size of the destination buffers (content plus padding).
    let destinationSize: VideoSize

    private let sws: ScaleContext?
    /// The converted picture before rotation, when both steps run.
    private let intermediatePool: PixelBufferPool?
    /// Plane pointers and strides handed to swscale; reused for every frame.
    private let sourcePointers: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    private let sourceStrides: UnsafeMutablePointer<Int32>
    private let destinationPointers: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private let destinationStrides: UnsafeMutablePointer<Int32>

    /// Scaling filter: bicubic, ffmpeg's default, since a conversion is done once and
    /// looked at many times. Pure layout changes (nv12 → yuv420p, yuyv422 → yuv422p,
    /// rgba → bgra) take swscale's exact unscaled paths whatever the filter.
    static let scalingFlags = sr_sws_bicubic()

    init(sourceSize: VideoSize, sourceFormat: PixelFormat, crop: CropRegion?, scaledSize: VideoSize?, rotation: Int, mirrored: Bool = false,
         destinationFormat: PixelFormat, destinationSize: VideoSize, color: ColorProperties) throws(SwiftRecordError) {
        let crop = crop ?? CropRegion(x: 0, y: 0, width: sourceSize.width, height: sourceSize.height)
        try FrameTransform.validate(crop: crop, in: sourceSize, format: sourceFormat)
        let scaled = scaledSize ?? crop.size
        let quarter = rotation == 90 || rotation == 270
        let content = quarter ? VideoSize(width: scaled.height, height: scaled.width) : scaled
        guard [0, 90, 180, 270].contains(rotation) else {
            throw SwiftRecordError(.invalidArgument, operation: "rotate", message: "\(rotation)° is not a quarter turn; expected 90, 180 or 270")
        }
        guard destinationSize.width >= content.width, destinationSize.height >= content.height else {
            throw SwiftRecordError(.invalidArgument, operation: "FrameTransform",
                                   message: "destination \(destinationSize) is smaller than the \(content) picture")
        }
        let needsConversion = sourceFormat != destinationFormat || scaled != crop.size
        if rotation != 0 || mirrored {
            let f = destinationFormat
            guard f.planeCount > 1 || f.chromaShift == (0, 0), !(f == .nv12 || f == .nv21) else {
                throw SwiftRecordError(.unsupported, operation: "rotate", message: "cannot rotate \(f) pictures; convert to a planar format first")
            }
            if quarter && f.chromaShift.x != f.chromaShift.y {
                throw SwiftRecordError(.unsupported, operation: "rotate",
                                       message: "a quarter turn of \(f) would need vertical chroma subsampling, which \(f) does not have; use yuv420p or yuv444p, or rotate in metadata")
            }
        }
        let pool = needsConversion && (rotation != 0 || mirrored)
            ? try PixelBufferPool(width: scaled.width, height: scaled.height, pixelFormat: destinationFormat, maximumBufferCount: 1)
            : nil
        var context: ScaleContext?
        if needsConversion {
            context = try ScaleContext(from: crop.size, sourceFormat, to: scaled, destinationFormat,
                                       flags: FrameTransform.scalingFlags, color: color)
        }
        // Nothing below throws: from here on deinit frees what was made.
        self.sourceSize = sourceSize
        self.sourceFormat = sourceFormat
        self.crop = crop
        self.scaledSize = scaled
        self.rotation = rotation
        self.mirrored = mirrored
        self.destinationFormat = destinationFormat
        self.contentSize = content
        self.destinationSize = destinationSize
        self.sws = context
        self.intermediatePool = pool
        sourcePointers = .allocate(capacity: 4)
        sourceStrides = .allocate(capacity: 4)
        destinationPointers = .allocate(capacity: 4)
        destinationStrides = .allocate(capacity: 4)
    }

    deinit {
        sourcePointers.deallocate()
        sourceStrides.deallocate()
        destinationPointers.deallocate()
        destinationStrides.deallocate()
    }

    /// Checks that `crop` lies inside the picture and starts on a chroma sample.
    static func validate(crop: CropRegion, in size: VideoSize, format: PixelFormat) throws(SwiftRecordError) {
        guard crop.x >= 0, crop.y >= 0, crop.width > 0, crop.height > 0,
              crop.x + crop.width <= size.width, crop.y + crop.height <= size.height else {
            throw SwiftRecordError(.invalidArgument, operation: "crop",
                                   message: "\(crop) does not fit in the \(size) picture; expected x+width ≤ \(size.width) and y+height ≤ \(size.height)")
        }
        let (sx, sy) = format.chromaShift
        guard crop.x % (1 << sx) == 0, crop.y % (1 << sy) == 0 else {
            let what = sx > 0 && sy > 0 ? "x and y" : (sx > 0 ? "x" : "y")
            throw SwiftRecordError(.invalidArgument, operation: "crop",
                                   message: "\(crop) starts between chroma samples of \(format); expected an even \(what)")
        }
    }

    /// Writes the transformed `source` into `destination`.
    func apply(_ source: PixelBuffer, into destination: PixelBuffer) throws(SwiftRecordError) {
        guard source !== destination else {
            throw SwiftRecordError(.invalidArgument, operation: "FrameTransform", message: "the source and the destination are the same buffer")
        }
        guard source.width == sourceSize.width, source.height == sourceSize.height, source.pixelFormat == sourceFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "FrameTransform",
                                   message: "source is \(source.width)x\(source.height) \(source.pixelFormat), expected \(sourceSize) \(sourceFormat)")
        }
        guard destination.width == destinationSize.width, destination.height == destinationSize.height,
              destination.pixelFormat == destinationFormat else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "FrameTransform",
                                   message: "destination is \(destination.width)x\(destination.height) \(destination.pixelFormat), expected \(destinationSize) \(destinationFormat)")
        }
        try source.withReadAccess { (src: [PixelPlane]) throws(SwiftRecordError) in
            try apply(planes: src, into: destination)
        }
    }

    /// Writes the transformed picture in `src` (planes of a `sourceSize` `sourceFormat`
    /// picture: a pinned frame's, say) into `destination`.
    func apply(planes src: [PixelPlane], into destination: PixelBuffer) throws(SwiftRecordError) {
        let view = cropped(src)
        try destination.withWriteAccess { (dst: [PixelPlane]) throws(SwiftRecordError) in
            if let sws {
                if let intermediatePool {
                    let mid = try intermediatePool.makePixelBuffer()
                    try mid.withWriteAccess { (m: [PixelPlane]) throws(SwiftRecordError) in
                        try scale(sws, from: view, to: m)
                        rotate(m, size: scaledSize, into: dst)
                    }
                } else {
                    try scale(sws, from: view, to: dst)
                }
            } else if rotation != 0 || mirrored {
                rotate(view, size: crop.size, into: dst)
            } else {
                copy(view, size: crop.size, into: dst)
            }
        }
        if destinationSize != contentSize {
            destination.extendEdges(contentWidth: contentSize.width, contentHeight: contentSize.height)
        }
    }

    /// The source planes starting at the crop's corner.
    private func cropped(_ planes: [PixelPlane]) -> [PixelPlane] {
        guard crop.x != 0 || crop.y != 0 || crop.size != sourceSize else { return planes }
        let f = sourceFormat
        return planes.enumerated().map { p, plane in
            let chroma = p > 0 && f.planeCount > 1
            let x = chroma ? crop.x >> f.chromaShift.x : crop.x
            let y = chroma ? crop.y >> f.chromaShift.y : crop.y
            return PixelPlane(baseAddress: plane.baseAddress + y * plane.bytesPerRow + x * f.pixelStep(plane: p),
                              bytesPerRow: plane.bytesPerRow,
                              rowLength: f.tightBytesPerRow(width: crop.width, plane: p),
                              height: f.planeHeight(crop.height, plane: p))
        }
    }

    private func scale(_ ctx: ScaleContext, from src: [PixelPlane], to dst: [PixelPlane]) throws(SwiftRecordError) {
        for i in 0..<4 {
            sourcePointers[i] = i < src.count ? UnsafePointer(src[i].baseAddress.assumingMemoryBound(to: UInt8.self)) : nil
            sourceStrides[i] = i < src.count ? Int32(src[i].bytesPerRow) : 0
            destinationPointers[i] = i < dst.count ? dst[i].baseAddress.assumingMemoryBound(to: UInt8.self) : nil
            destinationStrides[i] = i < dst.count ? Int32(dst[i].bytesPerRow) : 0
        }
        try ctx.scale(sourcePointers, sourceStrides, height: crop.height, into: destinationPointers, destinationStrides)
    }

    private func copy(_ src: [PixelPlane], size: VideoSize, into dst: [PixelPlane]) {
        let f = destinationFormat
        for p in 0..<min(src.count, dst.count) {
            let bytes = f.tightBytesPerRow(width: size.width, plane: p)
            for row in 0..<f.planeHeight(size.height, plane: p) {
                (dst[p].baseAddress + row * dst[p].bytesPerRow).copyMemory(from: src[p].baseAddress + row * src[p].bytesPerRow, byteCount: bytes)
            }
        }
    }

    /// Rotates a `size` picture in `src` clockwise by `rotation` into the top-left of `dst`.
    private func rotate(_ src: [PixelPlane], size: VideoSize, into dst: [PixelPlane]) {
        let f = destinationFormat
        for p in 0..<min(src.count, dst.count) {
            let w = f.planeWidth(size.width, plane: p), h = f.planeHeight(size.height, plane: p)
            let step = f.pixelStep(plane: p)
            switch step {
            case 1: rotatePlane(UInt8.self, src[p], dst[p], w, h)
            case 2: rotatePlane(UInt16.self, src[p], dst[p], w, h)
            case 4: rotatePlane(UInt32.self, src[p], dst[p], w, h)
            default: rotateBytes(step, src[p], dst[p], w, h)
            }
        }
    }

    /// Side of the square tiles rotation walks in, so reads and writes both stay in cache.
    static let rotationTile = 32

    /// Where source pixel (x, y) of a w×h plane lands after the rotation.
    @inline(__always)
    private func target(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> (Int, Int) {
        let x = mirrored ? w - 1 - x : x
        switch rotation {
        case 90: return (h - 1 - y, x)
        case 180: return (w - 1 - x, h - 1 - y)
        case 270: return (y, w - 1 - x)
        default: return (x, y)
        }
    }

    private func rotatePlane<T>(_: T.Type, _ src: PixelPlane, _ dst: PixelPlane, _ w: Int, _ h: Int) {
        let tile = FrameTransform.rotationTile
        let dstStride = dst.bytesPerRow
        for ty in stride(from: 0, to: h, by: tile) {
            for tx in stride(from: 0, to: w, by: tile) {
                for y in ty..<min(ty + tile, h) {
                    let row = (src.baseAddress + y * src.bytesPerRow).assumingMemoryBound(to: T.self)
                    for x in tx..<min(tx + tile, w) {
                        let (dx, dy) = target(x, y, w, h)
                        (dst.baseAddress + dy * dstStride).assumingMemoryBound(to: T.self)[dx] = row[x]
                    }
                }
            }
        }
    }

    private func rotateBytes(_ step: Int, _ src: PixelPlane, _ dst: PixelPlane, _ w: Int, _ h: Int) {
        for y in 0..<h {
            for x in 0..<w {
                let (dx, dy) = target(x, y, w, h)
                (dst.baseAddress + dy * dst.bytesPerRow + dx * step).copyMemory(from: src.baseAddress + y * src.bytesPerRow + x * step, byteCount: step)
            }
        }
    }
}

extension PixelBuffer {
    /// Fills the part of the buffer right of and below a `contentWidth`×`contentHeight`
    /// picture in its top-left corner by repeating the picture's last column and row
    /// (what an encoder needing even sides should see, rather than garbage or black).
    func extendEdges(contentWidth w: Int, contentHeight h: Int) {
        let f = pixelFormat
        guard w <= width, h <= height, w > 0, h > 0 else { return }
        withWriteAccess { planes in
            for (p, plane) in planes.enumerated() {
                let used = f.tightBytesPerRow(width: w, plane: p)
                let rowsUsed = f.planeHeight(h, plane: p)
                let base = plane.baseAddress.assumingMemoryBound(to: UInt8.self)
                if f.isPacked422 && w % 2 == 1 && width > w {
                    // The last pixel pair is half used: its second luma copies the first.
                    let off = f.packedLumaOffset
                    for row in 0..<rowsUsed {
                        let line = base + row * plane.bytesPerRow
                        line[2 * w + off] = line[2 * (w - 1) + off]
                    }
                }
                if plane.rowLength > used {
                    let step = f.pixelStep(plane: p)
                    for row in 0..<rowsUsed {
                        let line = base + row * plane.bytesPerRow
                        for i in used..<plane.rowLength { line[i] = line[i - step] }
                    }
                }
                if plane.height > rowsUsed {
                    let last = base + (rowsUsed - 1) * plane.bytesPerRow
                    for row in rowsUsed..<plane.height {
                        (base + row * plane.bytesPerRow).update(from: last, count: plane.rowLength)
                    }
                }
            }
        }
    }
}
