/// Keeps a yuv420p picture up to date with a 32-bit RGB picture of the same size by
/// converting only the rectangles that changed: the colour conversion of damage-driven
/// screen capture.
///
/// Rectangles are widened to even coordinates (each chroma sample covers a 2×2 block of
/// pixels), so every block converted reads only pixels of its own block and comes out
/// exactly as a conversion of the whole picture makes it. Debug builds convert whole
/// pictures with libswscale (`RGBToYUV420.isFastInThisBuild`); there the whole picture is
/// converted whenever anything changed, so the result still matches whole-picture
/// conversion sample for sample.
///
/// Not `Sendable`: it belongs to the one capture source that keeps the two pictures.
package final class RegionConverter {
    package let width: Int
    package let height: Int
    private let whole: PixelConverter
    private let direct: RGBToYUV420?

    /// A converter from `width`×`height` pictures in `sourceFormat` (bgra, bgr0, rgba) to
    /// yuv420p in `color`'s matrix and range. `convertsRegions` (tests) uses the SIMD
    /// converter on rectangles even in a debug build.
    package init(width: Int, height: Int, sourceFormat: PixelFormat, color: ColorProperties,
                 convertsRegions: Bool = RGBToYUV420.isFastInThisBuild) throws(SwiftRecordError) {
        self.width = width
        self.height = height
        whole = try PixelConverter(sourceWidth: width, sourceHeight: height, sourceFormat: sourceFormat,
                                   destinationWidth: width, destinationHeight: height, destinationFormat: .yuv420p, color: color)
        direct = convertsRegions ? RGBToYUV420(source: sourceFormat, destination: .yuv420p, color: color) : nil
    }

    /// False when every conversion converts the whole picture (debug builds).
    package var convertsRegions: Bool { direct != nil }

    /// `region` grown to even coordinates and clipped to the picture; nil when nothing is left.
    package func aligned(_ region: PixelRegion) -> PixelRegion? {
        let x0 = max(0, region.x) & ~1, y0 = max(0, region.y) & ~1
        let x1 = min(width, region.x + region.width + 1) & ~1, y1 = min(height, region.y + region.height + 1) & ~1
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Converts `regions` of `source` into the same places of `destination` (a yuv420p
    /// picture holding the previous conversion). Writing follows the pixel buffers'
    /// copy-on-write rule: a destination an encoder still holds moves to storage of its own
    /// first. Returns the number of pixels converted.
    @discardableResult
    package func convert(_ regions: [PixelRegion], from source: PixelBuffer, into destination: PixelBuffer) throws(SwiftRecordError) -> Int {
        guard destination.width == width, destination.height == height, destination.pixelFormat == .yuv420p else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "convert",
                                   message: "destination is \(destination.width)x\(destination.height) \(destination.pixelFormat), expected \(width)x\(height) yuv420p")
        }
        let parts = regions.compactMap(aligned)
        guard !parts.isEmpty else { return 0 }
        guard let direct else {
            try whole.convert(source, into: destination)
            return width * height
        }
        guard whole.matches(source) else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "convert",
                                   message: "source is \(source.width)x\(source.height) \(source.pixelFormat), expected \(width)x\(height)")
        }
        destination.withWriteAccess { dst in
            source.withReadAccess { src in
                for r in parts {
                    let s = src[0]
                    func plane(_ p: PixelPlane, _ x: Int, _ y: Int, _ bytes: Int, _ rows: Int) -> PixelPlane {
                        PixelPlane(baseAddress: p.baseAddress + y * p.bytesPerRow + x, bytesPerRow: p.bytesPerRow, rowLength: bytes, height: rows)
                    }
                    direct.convert(source: plane(s, 4 * r.x, r.y, 4 * r.width, r.height),
                                   luma: plane(dst[0], r.x, r.y, r.width, r.height),
                                   cb: plane(dst[1], r.x / 2, r.y / 2, r.width / 2, r.height / 2),
                                   cr: plane(dst[2], r.x / 2, r.y / 2, r.width / 2, r.height / 2),
                                   width: r.width, height: r.height)
                }
            }
        }
        return parts.reduce(0) { $0 + $1.width * $1.height }
    }
}
