/// The two pictures of damage-driven screen capture, for any source that learns which parts
/// of the screen changed (the X11 source from XDamage, the Wayland source from the
/// compositor's `SPA_META_VideoDamage`): `screen`, a 32-bit RGB copy of the screen that the
/// source brings up to date only where it changed, and its yuv420p conversion, the picture
/// delivered, in which only the same rectangles are converted again (``RegionConverter``).
///
/// A delivered picture someone still holds (the session, waiting for room; a writer's queue;
/// the encoder) is never changed: the change goes to a fresh pooled picture, which first gets
/// a copy of the previous one unless every pixel is converted again (and should the pool
/// run dry, the pixel buffers' copy on write still keeps the held picture intact).
///
/// Not `Sendable`: it belongs to the one capture source that keeps the two pictures, which
/// takes it out of its state while it works so that its own reference is the only one.
package struct DamagePicture {
    /// More rectangles than this are converted as their bounding box (bursts of small changes).
    package static let maximumRectangles = 48

    /// The screen as the source last saw it, in `converter`'s source format.
    package let screen: PixelBuffer
    /// The picture delivered last.
    package private(set) var picture: PixelBuffer
    private let pictures: PixelBufferPool
    package let converter: RegionConverter
    /// True once a whole picture has been converted: until then every conversion is whole.
    package private(set) var primed = false

    /// The whole picture's rectangle.
    package var whole: PixelRegion { PixelRegion(x: 0, y: 0, width: screen.width, height: screen.height) }

    /// Pictures for a `screen` (bgra, bgr0 or rgba) converted into yuv420p in `color`.
    /// The pool holds the picture being drawn, those the session holds (waiting for room, a
    /// spare) and those a writer's queue holds, pinned, until encoded (its depth: 3 in real
    /// time, 6 offline). Past that a change still goes to a copy, only slower.
    /// `convertsRegions` (tests): see ``RegionConverter``.
    package init(screen: PixelBuffer, color: ColorProperties, pictureCount: Int = 10,
                 convertsRegions: Bool = RGBToYUV420.isFastInThisBuild) throws(SwiftRecordError) {
        self.screen = screen
        pictures = try PixelBufferPool(width: screen.width, height: screen.height, pixelFormat: .yuv420p, maximumBufferCount: pictureCount)
        picture = try pictures.makePixelBuffer()
        converter = try RegionConverter(width: screen.width, height: screen.height, sourceFormat: screen.pixelFormat, color: color,
                                        convertsRegions: convertsRegions)
    }

    /// What to grab and convert for `rects` (already aligned): the whole picture before the
    /// first conversion or when the rectangles cover more than half of it, their bounding box
    /// when there are more than ``maximumRectangles``.
    package func simplified(_ rects: [PixelRegion]) -> [PixelRegion] {
        guard primed else { return [whole] }
        var rects = rects
        if rects.count > DamagePicture.maximumRectangles, let first = rects.first {
            rects = [rects.dropFirst().reduce(first) { $0.union($1) }]
        }
        if rects.reduce(0, { $0 + $1.width * $1.height }) * 2 > whole.width * whole.height { rects = [whole] }
        return rects
    }

    /// Converts `rects` of `screen` (as ``simplified(_:)`` made them) into the delivered
    /// picture and returns it; a picture someone still holds moves to a fresh one first.
    package mutating func convert(_ rects: [PixelRegion]) throws(SwiftRecordError) -> PixelBuffer {
        if !isKnownUniquelyReferenced(&picture) || !picture.isUniquelyReferenced,
           let fresh = pictures.makePixelBufferIfAvailable() {
            if rects != [whole] && converter.convertsRegions { try fresh.copyContents(from: picture) }
            picture = fresh
        }
        try converter.convert(rects, from: screen, into: picture)
        if rects == [whole] { primed = true }
        return picture
    }
}

extension PixelRegion {
    /// True when the two share a pixel.
    package func intersects(_ other: PixelRegion) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }

    /// The smallest rectangle holding both.
    package func union(_ other: PixelRegion) -> PixelRegion {
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return PixelRegion(x: x0, y: y0, width: max(x + width, other.x + other.width) - x0,
                           height: max(y + height, other.y + other.height) - y0)
    }
}
