internal import CX11
import SwiftRecord

/// Test only (`swift-record --simulate-x11-workload`): paints a deterministic workload on
/// an X display, one step per picture, so two recordings of it (whole grabs and damage
/// grabs) can be compared frame for frame. Each step draws and then waits for the server
/// (`XSync`), so a grab that follows sees exactly that step's screen.
///
/// Not `Sendable`: its connection serves one thread; its owner keeps it behind a lock.
package final class X11TestWorkload {
    /// What changes from one picture to the next.
    package enum Kind: String, CaseIterable, Sendable {
        /// Nothing after the first picture.
        case still
        /// A 600x400 "terminal" redrawn every picture: lines of different lengths and colours.
        case terminal
        /// Only the pointer moves (sometimes not at all, sometimes over the terminal).
        case cursor
        /// The terminal redrawn while the pointer moves across it and off the area.
        case mixed
        /// Every pixel of the screen changes every picture.
        case motion
    }

    package let kind: Kind
    private let connection: X11Connection
    private let gc: OpaquePointer?

    package init(kind: Kind, display: String?) throws(SwiftRecordError) {
        self.kind = kind
        connection = try X11Connection(name: display)
        guard let d = connection.display else { throw connection.lostError }
        gc = XCreateGC(d, connection.root, 0, nil)
    }

    deinit {
        if let d = connection.display, let gc, !connection.isLost { XFreeGC(d, gc) }
    }

    private func fill(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ rgb: UInt32) {
        guard let d = connection.display, let gc else { return }
        XSetForeground(d, gc, UInt(rgb))
        XFillRectangle(d, connection.root, gc, Int32(x), Int32(y), UInt32(max(1, w)), UInt32(max(1, h)))
    }

    /// A colour from a step and a position, the same on every run.
    private func colour(_ a: Int, _ b: Int) -> UInt32 {
        var v = UInt32(truncatingIfNeeded: a &* 2_654_435_761 &+ b &* 40_503)
        v ^= v >> 13
        return (v &* 2_246_822_519) & 0xFF_FFFF
    }

    /// Paints step `step` (0 first) and waits until the server has drawn it.
    package func paint(step: Int) throws(SwiftRecordError) {
        guard let d = connection.display, !connection.isLost else { throw connection.lostError }
        let (w, h) = (connection.screenWidth, connection.screenHeight)
        if step == 0 || kind == .motion {
            // Bands of colour over the whole screen; in motion they move every step.
            let band = 48
            for i in 0...(h / band) {
                fill(0, i * band, w, band, colour(kind == .motion ? step + i : i, 7))
            }
            if kind == .motion { fill((step * 37) % max(1, w - 200), (step * 23) % max(1, h - 150), 200, 150, colour(step, 99)) }
        }
        let terminal = (x: min(64, w / 8), y: min(48, h / 8), w: min(600, w / 2), h: min(400, h / 2))
        if kind == .terminal || kind == .mixed || (step == 0 && kind != .motion) {
            fill(terminal.x, terminal.y, terminal.w, terminal.h, 0x1E1E1E)
            let lines = terminal.h / 18
            for line in 0..<lines {
                let length = (step * 7 + line * 13) % max(1, terminal.w - 16) + 8
                fill(terminal.x + 8, terminal.y + 4 + line * 18, length, 12, colour(step, line) | 0x40_4040)
            }
        }
        if kind == .cursor || kind == .mixed || step == 0 {
            // Still on every third step; over the terminal, elsewhere, and at the edges.
            let n = kind == .cursor || kind == .mixed ? step - step / 3 : 0
            let x = (n * 53) % (w + 40) - 20, y = (n * 31) % (h + 30) - 15
            XWarpPointer(d, 0, connection.root, 0, 0, 0, 0, Int32(x), Int32(y))
        }
        connection.sync()
    }
}
