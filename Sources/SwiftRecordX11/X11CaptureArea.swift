internal import CX11
import Foundation
import SwiftRecord

/// Where on the screen a capture looks: window ids as typed, the even-sided area 4:2:0
/// video needs, a window's rectangle and position, kept on the screen.
extension X11Source {
    /// `0x2a00007` or `44040199`.
    public static func parseWindowID(_ text: String) -> UInt? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let id = t.hasPrefix("0x") ? UInt(t.dropFirst(2), radix: 16) : UInt(t)
        return id.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Grows an odd side by one pixel (right or down, or left or up at the screen's edge),
    /// or shrinks it when the screen itself is that small.
    static func evenArea(_ r: CaptureRect, screen: VideoSize) -> CaptureRect {
        r.evenSided(within: screen)
    }

    /// The window's rectangle on the screen, clipped to the screen's size.
    static func windowArea(_ window: UInt, connection: X11Connection) throws(SwiftRecordError) -> CaptureRect {
        guard let display = connection.display else { throw connection.lostError }
        _ = connection.takeError()
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, window, &attributes) != 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "window", message: "display \(connection.name) has no window \(hex(window)); xwininfo shows the ids")
        }
        let position = try windowPosition(window, connection: connection)
        let w = min(Int(attributes.width), connection.screenWidth)
        let h = min(Int(attributes.height), connection.screenHeight)
        return clamp(CaptureRect(x: position.x, y: position.y, width: w, height: h),
                     screen: VideoSize(width: connection.screenWidth, height: connection.screenHeight))
    }

    /// Where the window's top-left corner is on the root window (a round trip).
    static func windowPosition(_ window: UInt, connection: X11Connection) throws(SwiftRecordError) -> (x: Int, y: Int) {
        guard let display = connection.display, !connection.isLost else { throw connection.lostError }
        var x: Int32 = 0, y: Int32 = 0
        var child: UInt = 0
        if XTranslateCoordinates(display, window, connection.root, 0, 0, &x, &y, &child) == 0 {
            if connection.isLost { throw connection.lostError }
            _ = connection.takeError()
            throw SwiftRecordError(.io, operation: "window", message: "window \(hex(window)) is gone from display \(connection.name) (closed?)")
        }
        return (Int(x), Int(y))
    }

    /// Moves `r` so it lies on the screen (a window partly off screen is captured at the edge).
    static func clamp(_ r: CaptureRect, screen: VideoSize) -> CaptureRect {
        var c = r
        c.x = max(0, min(r.x, screen.width - r.width))
        c.y = max(0, min(r.y, screen.height - r.height))
        return c
    }

    static func hex(_ id: UInt) -> String { "0x" + String(id, radix: 16) }
}
