internal import CPipeWire
import SwiftRecordPipeWire
import SwiftRecord

/// Copies a PipeWire buffer's picture into a BGRA pixel buffer: the stride the compositor
/// chose, its crop region (`SPA_META_VideoCrop`) when it sends one, then the `--region` asked
/// for, red and blue swapped for RGBx/RGBA.
///
/// A picture of the pixel buffer's size is copied row by row. One of another size (the
/// monitor given another mode, a crop that changed) is scaled to fit, keeping its shape,
/// centred on black (letterboxed), through libswscale: the file keeps its size.
struct StreamPictureCopy {
    /// What one copy did.
    enum Outcome: Equatable {
        /// Copied at its own size.
        case copied
        /// Scaled from a picture of this size to fit, with black bars.
        case letterboxed(from: VideoSize)
        /// The buffer held no readable picture (left as it was).
        case skipped
    }

    /// Pictures letterboxed so far.
    private(set) var letterboxed = 0
    /// The picture size last announced as letterboxed.
    private var announcedSize: VideoSize?

    /// The scaler of the last letterboxed size, kept while the size stays.
    private var scaler: (key: ScalerKey, context: ScaleContext)?

    private struct ScalerKey: Equatable {
        var source: VideoSize, format: PixelFormat, destination: VideoSize
    }

    init() {}

    /// Counts `outcome` and says, once for each new size that had to be letterboxed, what
    /// happened to the pictures (nil otherwise).
    mutating func announcement(after outcome: Outcome, recordingSize: VideoSize) -> String? {
        guard case .letterboxed(let size) = outcome else { return nil }
        letterboxed += 1
        guard announcedSize != size else { return nil }
        announcedSize = size
        return "the monitor's picture is now \(size) instead of \(recordingSize): scaled to fit the recording's \(recordingSize), with black bars (the file keeps its size)"
    }

    /// Where the recorded picture lies in a buffer: its first pixel, its rows' stride, its
    /// corner in the stream's picture (the crop region's and `--region`'s offsets), its size,
    /// and how many of its rows lie inside the mapped memory, whatever the chunk claims.
    struct Geometry {
        var source: UnsafeRawPointer
        var stride: Int
        var left: Int, top: Int, width: Int, height: Int
        var rowsInMemory: Int
    }

    /// The geometry of `held`'s picture (in `format`); `region` is a rectangle of the
    /// compositor's picture, kept to the part of it the picture still has. Nil when the
    /// buffer holds no readable picture.
    static func geometry(_ held: UnsafeMutablePointer<pw_buffer>, format: StreamFormat, region: PixelRegion?) -> Geometry? {
        guard let buffer = held.pointee.buffer, let data = buffer.pointee.datas, let base = data.pointee.data,
              let chunk = data.pointee.chunk else { return nil }
        let maxSize = Int(data.pointee.maxsize)
        let offset = Int(chunk.pointee.offset) % max(maxSize, 1)
        let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : format.width * 4
        var left = 0, top = 0, width = format.width, height = format.height
        if let crop = spa_buffer_find_meta_data(buffer, SPA_META_VideoCrop.rawValue, MemoryLayout<spa_meta_region>.size)?
            .assumingMemoryBound(to: spa_meta_region.self).pointee.region,
           crop.size.width > 0, crop.size.height > 0 {
            left = max(0, Int(crop.position.x))
            top = max(0, Int(crop.position.y))
            width = min(Int(crop.size.width), format.width - left)
            height = min(Int(crop.size.height), format.height - top)
        }
        if let region {
            let x0 = max(0, region.x), y0 = max(0, region.y)
            let x1 = min(region.x + region.width, width), y1 = min(region.y + region.height, height)
            if x1 > x0 && y1 > y0 {
                left += x0
                top += y0
                width = x1 - x0
                height = y1 - y0
            }
        }
        guard width > 0, height > 0, stride >= width * 4 else { return nil }
        let available = maxSize - offset
        let rowsInMemory = available >= left * 4 + width * 4 ? (available - left * 4 - width * 4) / stride + 1 - top : 0
        return Geometry(source: UnsafeRawPointer(base + offset + top * stride + left * 4), stride: stride,
                        left: left, top: top, width: width, height: height, rowsInMemory: rowsInMemory)
    }

    /// Copies the picture of `held` (in `format`) into `picture`; `region` is a rectangle of
    /// the compositor's picture, kept to the part of it the picture still has. With `rects`
    /// (rectangles of `picture`), a picture of `picture`'s size is copied only there.
    mutating func copy(_ held: UnsafeMutablePointer<pw_buffer>, format: StreamFormat, region: PixelRegion?,
                       into picture: PixelBuffer, only rects: [PixelRegion]? = nil) -> Outcome {
        guard let g = StreamPictureCopy.geometry(held, format: format, region: region) else { return .skipped }
        if g.width == picture.width && g.height == picture.height {
            let rows = max(0, min(g.height, g.rowsInMemory))
            picture.withWriteAccess { planes in
                let plane = planes[0]
                for r in rects ?? [PixelRegion(x: 0, y: 0, width: g.width, height: plane.height)] {
                    let x0 = max(0, r.x), x1 = min(g.width, r.x + r.width)
                    guard x1 > x0 else { continue }
                    for y in max(0, r.y)..<max(max(0, r.y), min(plane.height, r.y + r.height)) {
                        let to = plane.baseAddress + y * plane.bytesPerRow + x0 * 4
                        guard y < rows else {
                            memset(to, 0, (x1 - x0) * 4)
                            continue
                        }
                        let from = g.source + y * g.stride + x0 * 4
                        if format.pixelFormat.swapsRedAndBlue {
                            StreamPictureCopy.swapRedAndBlue(from, to, pixels: x1 - x0)
                        } else {
                            memcpy(to, from, (x1 - x0) * 4)
                        }
                    }
                }
            }
            return .copied
        }
        guard g.rowsInMemory >= g.height else { return .skipped }
        let size = VideoSize(width: g.width, height: g.height)
        return letterbox(g.source, stride: g.stride, size: size, format: format.pixelFormat, into: picture) ? .letterboxed(from: size) : .skipped
    }

    /// Where a picture of `size` lands in `bounds` scaled to fit, keeping its shape: even
    /// sides and an even corner, centred (4:2:0 video keeps whole chroma samples).
    static func fit(_ size: VideoSize, in bounds: VideoSize) -> PixelRegion {
        // width/height against bounds' ratio, in integers: the side that limits decides.
        let widthLimits = size.width * bounds.height >= size.height * bounds.width
        var w = widthLimits ? bounds.width : max(2, Int((Double(size.width) * Double(bounds.height) / Double(size.height)).rounded()))
        var h = widthLimits ? max(2, Int((Double(size.height) * Double(bounds.width) / Double(size.width)).rounded())) : bounds.height
        w = min(bounds.width, w - w % 2)
        h = min(bounds.height, h - h % 2)
        let x = (bounds.width - w) / 2, y = (bounds.height - h) / 2
        return PixelRegion(x: x - x % 2, y: y - y % 2, width: w, height: h)
    }

    /// Scales `size` pixels at `source` into `picture`, fitted and centred, black around.
    private mutating func letterbox(_ source: UnsafeRawPointer, stride: Int, size: VideoSize, format: StreamPixelFormat,
                                    into picture: PixelBuffer) -> Bool {
        let bounds = VideoSize(width: picture.width, height: picture.height)
        let area = StreamPictureCopy.fit(size, in: bounds)
        guard area.width > 0, area.height > 0 else { return false }
        // x in BGRx/RGBx is scaled as alpha would be and never read: BGRA out either way.
        let key = ScalerKey(source: size, format: format.swapsRedAndBlue ? .rgba : .bgra, destination: area.size)
        if scaler?.key != key {
            scaler = nil
            guard let context = try? ScaleContext(from: key.source, key.format, to: key.destination, .bgra) else { return false }
            scaler = (key, context)
        }
        guard let context = scaler?.context else { return false }
        return picture.withWriteAccess { planes -> Bool in
            let plane = planes[0]
            for y in 0..<plane.height { memset(plane.baseAddress + y * plane.bytesPerRow, 0, plane.rowLength) }
            var sourcePlanes: [UnsafePointer<UInt8>?] = [source.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
            var sourceStrides: [Int32] = [Int32(stride), 0, 0, 0]
            let target = (plane.baseAddress + area.y * plane.bytesPerRow + area.x * 4).assumingMemoryBound(to: UInt8.self)
            var destinationPlanes: [UnsafeMutablePointer<UInt8>?] = [target, nil, nil, nil]
            var destinationStrides: [Int32] = [Int32(plane.bytesPerRow), 0, 0, 0]
            do {
                try context.scale(&sourcePlanes, &sourceStrides, height: size.height, into: &destinationPlanes, &destinationStrides)
                return true
            } catch {
                return false
            }
        }
    }

    private static func swapRedAndBlue(_ from: UnsafeRawPointer, _ to: UnsafeMutableRawPointer, pixels: Int) {
        let source = from.assumingMemoryBound(to: UInt8.self)
        let destination = to.assumingMemoryBound(to: UInt8.self)
        for i in 0..<pixels {
            let p = 4 * i
            destination[p] = source[p + 2]
            destination[p + 1] = source[p + 1]
            destination[p + 2] = source[p]
            destination[p + 3] = source[p + 3]
        }
    }
}
