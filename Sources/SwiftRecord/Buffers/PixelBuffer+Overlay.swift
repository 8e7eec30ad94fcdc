extension PixelBuffer {
    /// Composites a premultiplied BGRA bitmap (`width`×`height`, 4 bytes a pixel, rows
    /// packed) over this BGRA picture with its top-left corner at (`left`, `top`); the part
    /// outside the picture is left out. "Over", rounded: what a cursor drawn in by the X
    /// server or the compositor would have looked like.
    package func compositePremultiplied(_ bitmap: [UInt8], width: Int, height: Int, left: Int, top: Int) {
        let x0 = max(0, left), y0 = max(0, top)
        let x1 = min(self.width, left + width), y1 = min(self.height, top + height)
        guard x0 < x1, y0 < y1, bitmap.count >= 4 * width * height else { return }
        bitmap.withUnsafeBufferPointer { source in
            withWriteAccess { planes in
                let plane = planes[0]
                for y in y0..<y1 {
                    let row = (plane.baseAddress + y * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    let sourceRow = (y - top) * width
                    for x in x0..<x1 {
                        let s = 4 * (sourceRow + x - left)
                        let alpha = UInt32(source[s + 3])
                        if alpha == 0 { continue }
                        let d = 4 * x, keep = 255 - alpha
                        for channel in 0..<3 {
                            row[d + channel] = UInt8(min(255, UInt32(source[s + channel]) + (UInt32(row[d + channel]) * keep + 127) / 255))
                        }
                    }
                }
            }
        }
    }
}
