internal import CX11
import SwiftRecord

/// Draws the mouse cursor into grabbed pictures. X servers leave the cursor out of
/// `GetImage`; XFixes hands out its image and position (one round trip per frame).
/// The image is converted once per cursor shape (XFixes' serial number tells when it changes).
struct CursorOverlay {
    private var serial: UInt = 0
    private var width = 0
    private var height = 0
    private var hotX = 0
    private var hotY = 0
    /// Premultiplied BGRA, row by row.
    private var pixels: [UInt8] = []

    /// The cursor shape's serial number (XFixes counts shape changes).
    var shapeSerial: UInt { serial }

    /// Composites the cursor over `buffer`, which shows the screen area whose top-left
    /// corner is (`originX`, `originY`). Does nothing when the cursor is elsewhere.
    mutating func draw(_ connection: X11Connection, into buffer: PixelBuffer, originX: Int, originY: Int) {
        guard let r = update(connection) else { return }
        composite(into: buffer, left: r.x - originX, top: r.y - originY)
    }

    /// Fetches the cursor's image (converted once per shape) and position: one round trip.
    /// Returns the image's rectangle on the screen, or nil when XFixes gives none.
    mutating func update(_ connection: X11Connection) -> CaptureRect? {
        guard let display = connection.display, !connection.isLost,
              let cursor = XFixesGetCursorImage(display) else { return nil }
        defer { XFree(cursor) }
        let c = cursor.pointee
        if c.cursor_serial != serial || pixels.isEmpty {
            serial = c.cursor_serial
            width = Int(c.width)
            height = Int(c.height)
            hotX = Int(c.xhot)
            hotY = Int(c.yhot)
            pixels = [UInt8](repeating: 0, count: width * height * 4)
            if let source = c.pixels {
                for i in 0..<(width * height) {
                    // Each pixel is 32-bit ARGB (premultiplied) in an `unsigned long`.
                    let argb = UInt32(truncatingIfNeeded: source[i])
                    pixels[4 * i] = UInt8(truncatingIfNeeded: argb)
                    pixels[4 * i + 1] = UInt8(truncatingIfNeeded: argb >> 8)
                    pixels[4 * i + 2] = UInt8(truncatingIfNeeded: argb >> 16)
                    pixels[4 * i + 3] = UInt8(truncatingIfNeeded: argb >> 24)
                }
            }
        }
        return CaptureRect(x: Int(c.x) - hotX, y: Int(c.y) - hotY, width: width, height: height)
    }

    /// Composites the last fetched cursor image over `buffer` with its top-left corner at
    /// (`left`, `top`) of the buffer; the part outside the buffer is left out.
    func composite(into buffer: PixelBuffer, left: Int, top: Int) {
        buffer.compositePremultiplied(pixels, width: width, height: height, left: left, top: top)
    }
}
