package import CPipeWire
import SwiftRecord

/// The cursor a compositor sends beside the pictures (cursor mode "metadata",
/// `SPA_META_Cursor`): where it is, its hotspot and its shape, drawn by us into each picture
/// copied out, as the X11 source draws the cursor XFixes gives it.
///
/// A buffer's metadata says only what changed: an id of 0 means no news, a bitmap offset of
/// 0 keeps the shape, a bitmap whose data offset is 0 hides the cursor.
package struct StreamCursor: Sendable, Equatable {
    package var x = 0, y = 0
    package var hotX = 0, hotY = 0
    package var width = 0, height = 0
    /// Premultiplied BGRA, row by row; empty: no shape yet, or hidden.
    package var pixels: [UInt8] = []

    package init(x: Int = 0, y: Int = 0, hotX: Int = 0, hotY: Int = 0, width: Int = 0, height: Int = 0, pixels: [UInt8] = []) {
        (self.x, self.y, self.hotX, self.hotY, self.width, self.height, self.pixels) = (x, y, hotX, hotY, width, height, pixels)
    }

    /// What one buffer's metadata says.
    package struct Update: Sendable {
        package var x: Int, y: Int
        /// A new shape: its hotspot, size and pixels (empty: hidden).
        package var shape: (hotX: Int, hotY: Int, width: Int, height: Int, pixels: [UInt8])?
    }

    /// The cursor news in `buffer`, if any. Called on PipeWire's thread; allocates only when
    /// a new shape comes.
    package static func update(in buffer: UnsafeMutablePointer<spa_buffer>) -> Update? {
        guard let meta = spa_buffer_find_meta(buffer, SPA_META_Cursor.rawValue), let data = meta.pointee.data else { return nil }
        let size = Int(meta.pointee.size)
        guard size >= MemoryLayout<spa_meta_cursor>.size else { return nil }
        let cursor = data.assumingMemoryBound(to: spa_meta_cursor.self).pointee
        guard cursor.id != 0 else { return nil }
        var update = Update(x: Int(cursor.position.x), y: Int(cursor.position.y))
        let at = Int(cursor.bitmap_offset)
        guard at >= MemoryLayout<spa_meta_cursor>.size, at + MemoryLayout<spa_meta_bitmap>.size <= size else { return update }
        let bitmap = (data + at).assumingMemoryBound(to: spa_meta_bitmap.self).pointee
        guard bitmap.format != 0 else { return update }
        let width = Int(bitmap.size.width), height = Int(bitmap.size.height)
        let stride = bitmap.stride > 0 ? Int(bitmap.stride) : width * 4
        let pixelsAt = at + Int(bitmap.offset)
        guard bitmap.offset != 0, width > 0, height > 0, stride >= width * 4, pixelsAt + stride * (height - 1) + width * 4 <= size,
              let layout = StreamPixelFormat(spa_video_format(bitmap.format)), layout.isRGB else {
            update.shape = (0, 0, 0, 0, [])
            return update
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let source = UnsafeRawPointer(data + pixelsAt).assumingMemoryBound(to: UInt8.self)
        for row in 0..<height {
            for column in 0..<width {
                let s = row * stride + column * 4, d = (row * width + column) * 4
                let opaque = layout == .bgrx || layout == .rgbx
                pixels[d] = source[s + (layout.swapsRedAndBlue ? 2 : 0)]
                pixels[d + 1] = source[s + 1]
                pixels[d + 2] = source[s + (layout.swapsRedAndBlue ? 0 : 2)]
                pixels[d + 3] = opaque ? 255 : source[s + 3]
            }
        }
        update.shape = (Int(cursor.hotspot.x), Int(cursor.hotspot.y), width, height, pixels)
        return update
    }

    /// Takes `update` in; returns whether the drawn cursor changes.
    package mutating func apply(_ update: Update) -> Bool {
        let before = self
        x = update.x
        y = update.y
        if let shape = update.shape {
            (hotX, hotY, width, height, pixels) = shape
        }
        return self != before
    }

    /// The rectangle the cursor covers in a picture whose corner is `shift` on the monitor;
    /// nil when there is no shape to draw.
    package func rect(shiftedBy shift: (x: Int, y: Int) = (0, 0)) -> PixelRegion? {
        guard !pixels.isEmpty else { return nil }
        return PixelRegion(x: x - hotX - shift.x, y: y - hotY - shift.y, width: width, height: height)
    }

    /// Composites the cursor over `buffer` (BGRA) with its hotspot at its position; the part
    /// outside the picture is left out. Premultiplied "over", as Mutter sends its bitmaps.
    /// `shift`: the corner of the part of the monitor the picture shows (a `--region`).
    package func composite(into buffer: PixelBuffer, shiftedBy shift: (x: Int, y: Int) = (0, 0)) {
        guard !pixels.isEmpty else { return }
        buffer.compositePremultiplied(pixels, width: width, height: height, left: x - hotX - shift.x, top: y - hotY - shift.y)
    }
}
