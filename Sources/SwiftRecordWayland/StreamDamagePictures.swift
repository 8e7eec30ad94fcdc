internal import CPipeWire
import SwiftRecordPipeWire
import SwiftRecord

/// Damage-driven copying of a screen cast (the `damage` capture method): the compositor's
/// buffers each hold a whole picture and, with `SPA_META_VideoDamage`, the rectangles that
/// changed since the picture before. Only those (gathered over the pictures superseded
/// before a copy, `StreamFrames.State.gather(damage:)`) are copied into the screen picture
/// and converted into the yuv420p picture delivered (`DamagePicture`), as the X11 source
/// does with XDamage. Without damage metadata (Mutter 43 sends none), after a format change
/// and for a picture letterboxed because the monitor changed size, all of it is.
///
/// The cursor sent as metadata is drawn into the screen picture: when it moves or changes
/// shape its old and new rectangles are copied again first, and when changed pixels lie
/// under it, its rectangle, so it is always drawn over clean pixels, once.
struct StreamDamagePictures {
    var pictures: DamagePicture
    /// The cursor last drawn into the screen picture, and where.
    private var drawnCursor: StreamCursor?
    private var cursorRect: PixelRegion?

    init(pictures: DamagePicture) {
        self.pictures = pictures
    }

    /// Brings the pictures up to date with `held` (in `format`; `region`: the part of the
    /// compositor's picture recorded) given what changed since the last update (`damage`, in
    /// the compositor's picture coordinates; nil: everything) and the cursor to draw. Returns
    /// the new picture and how it was copied, or nil when nothing changed in the recorded part.
    mutating func update(_ held: UnsafeMutablePointer<pw_buffer>, format: StreamFormat, region: PixelRegion?, damage: [PixelRegion]?,
                         cursor: StreamCursor?, copier: inout StreamPictureCopy,
                         statistics: inout GrabStatistics) throws(SwiftRecordError) -> (PixelBuffer, StreamPictureCopy.Outcome)? {
        let geometry = StreamPictureCopy.geometry(held, format: format, region: region)
        let whole = pictures.whole
        let sameSize = geometry.map { $0.width == whole.width && $0.height == whole.height } ?? false
        var rects: [PixelRegion]
        if let damage, let g = geometry, sameSize {
            rects = damage.compactMap {
                pictures.converter.aligned(PixelRegion(x: $0.x - g.left, y: $0.y - g.top, width: $0.width, height: $0.height))
            }
        } else {
            rects = [whole]
        }
        // The cursor where it is on the monitor (moved by the region's corner); not over a
        // letterboxed picture (scaled: its place there would be wrong).
        let shift = region.map { ($0.x, $0.y) } ?? (0, 0)
        let drawn = sameSize ? cursor : nil
        let now = drawn?.rect(shiftedBy: shift).flatMap { $0.intersects(whole) ? $0 : nil }
        if drawn != drawnCursor {
            rects += [cursorRect, now].compactMap { $0.flatMap(pictures.converter.aligned) }
        } else if let r = now, rects.contains(where: { $0.intersects(r) }), let a = pictures.converter.aligned(r) {
            rects.append(a)
        }
        rects = pictures.simplified(rects)
        guard !rects.isEmpty else { return nil }
        let outcome = copier.copy(held, format: format, region: region, into: pictures.screen, only: rects == [whole] ? nil : rects)
        guard outcome != .skipped else { return nil }
        if outcome == .copied, let drawn, let r = now, rects.contains(where: { $0.intersects(r) }) {
            drawn.composite(into: pictures.screen, shiftedBy: shift)
        }
        (drawnCursor, cursorRect) = (drawn, now)
        let picture = try pictures.convert(rects)
        if rects == [whole] { statistics.fullGrabs += 1 } else { statistics.partialGrabs += 1 }
        statistics.rectangles += rects.count
        statistics.grabbedPixels += rects.reduce(0) { $0 + $1.width * $1.height }
        return (picture, outcome)
    }
}
