internal import CX11
import Foundation
import SwiftRecord

/// EXAMPLE AND TEST INSTRUMENT: a small window of the calling process, standing for an
/// application's own user interface in ported Apple code (Examples/ReplayKitWriter): it
/// says whose it is (`_NET_WM_PID`, as toolkits do) and draws a numbered step per call, a
/// bar moving over a coloured ground, so a recording of it shows motion.
///
/// Not `Sendable`: its connection serves the thread that made it.
package final class X11AppWindow {
    private let connection: X11Connection
    private let window: UInt
    private let gc: OpaquePointer?
    package let width: Int, height: Int

    /// Opens `display` (nil: `$DISPLAY`) and maps a `width`x`height` window titled `title` at (`x`, `y`).
    package init(display: String? = nil, title: String, x: Int = 0, y: Int = 0, width: Int, height: Int) throws(SwiftRecordError) {
        connection = try X11Connection(name: display)
        guard let d = connection.display else { throw connection.lostError }
        (self.width, self.height) = (width, height)
        let window = XCreateSimpleWindow(d, connection.root, Int32(x), Int32(y), UInt32(max(1, width)), UInt32(max(1, height)), 0, 0, 0x20_4060)
        self.window = window
        XStoreName(d, window, title)
        var pid = CLong(getpid())
        let atom = XInternAtom(d, "_NET_WM_PID", 0)
        withUnsafeBytes(of: &pid) { raw in
            _ = XChangeProperty(d, window, atom, sr_xa_cardinal(), 32, PropModeReplace, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), 1)
        }
        XMapRaised(d, window)
        gc = XCreateGC(d, window, 0, nil)
        guard connection.sync() else { throw connection.lostError }
    }

    deinit {
        if let d = connection.display, !connection.isLost {
            if let gc { XFreeGC(d, gc) }
            XDestroyWindow(d, window)
            _ = connection.sync()
        }
    }

    /// Draws step `step` and waits until the server has drawn it.
    package func draw(step: Int) throws(SwiftRecordError) {
        guard let d = connection.display, let gc, !connection.isLost else { throw connection.lostError }
        let ground: UInt = step / 30 % 2 == 0 ? 0x20_4060 : 0x60_4020
        XSetForeground(d, gc, ground)
        XFillRectangle(d, window, gc, 0, 0, UInt32(width), UInt32(height))
        let bar = max(8, width / 10)
        XSetForeground(d, gc, 0xF0_F0F0)
        XFillRectangle(d, window, gc, Int32(step * 4 % max(1, width - bar)), 0, UInt32(bar), UInt32(height))
        guard connection.sync() else { throw connection.lostError }
    }
}
