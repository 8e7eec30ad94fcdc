import CX11
import Foundation
import SwiftRecord
import SwiftRecordX11
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Which windows are this process's (`X11Source.windows(ofProcess:)`, what ReplayKit's
/// in-app capture records): a private Xvfb with windows that say they are ours, another
/// process's, ours but not mapped, ours inside a window manager's frame, and a window that
/// says nothing; and `X11AppWindow`, which says it is ours as toolkits do.
final class ProcessWindowsTests: XvfbTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    /// Sets `window`'s `_NET_WM_PID` to `pid`.
    private func say(_ painter: XPainter, _ window: UInt, pid: Int32) {
        var value = CLong(pid)
        let atom = XInternAtom(painter.display, "_NET_WM_PID", 0)
        withUnsafeBytes(of: &value) { raw in
            _ = XChangeProperty(painter.display, window, atom, sr_xa_cardinal(), 32, PropModeReplace,
                                raw.baseAddress?.assumingMemoryBound(to: UInt8.self), 1)
        }
        XSync(painter.display, 0)
    }

    func testOnlyTheMappedWindowsThatSayTheyAreOursAreFound() throws {
        let painter = try XPainter(server)
        let me = getpid()
        let ours = painter.window(x: 100, y: 50, width: 200, height: 120, rgb: 0x2040E0)
        say(painter, ours, pid: me)
        let theirs = painter.window(x: 400, y: 50, width: 200, height: 120, rgb: 0xE02020)
        say(painter, theirs, pid: me + 1)
        _ = painter.window(x: 700, y: 50, width: 100, height: 100, rgb: 0x20C040)
        // Ours but never mapped.
        let hidden = XCreateSimpleWindow(painter.display, painter.root, 10, 400, 50, 50, 0, 0, 0)
        say(painter, hidden, pid: me)
        // A window manager's frame (no pid) holding our client 4 pixels in.
        let frame = painter.window(x: 300, y: 300, width: 208, height: 158, rgb: 0x808080)
        let client = XCreateSimpleWindow(painter.display, frame, 4, 30, 200, 124, 0, 0, 0xF0F0F0)
        XMapWindow(painter.display, client)
        say(painter, client, pid: me)
        defer { for w in [ours, theirs, hidden, frame] { painter.destroy(w) } }

        let found = try X11Source.windows(ofProcess: me, display: server.display)
        XCTAssertEqual(found.map(\.window), [ours, client], "bottom of the stack first: \(found)")
        XCTAssertEqual(found.first?.area, CaptureRect(x: 100, y: 50, width: 200, height: 120))
        XCTAssertEqual(found.last?.area, CaptureRect(x: 304, y: 330, width: 200, height: 124))
        XCTAssertEqual(try X11Source.windows(ofProcess: me + 2, display: server.display).count, 0)
    }

    func testTheAppWindowSaysItIsOursAndDraws() throws {
        let window = try X11AppWindow(display: server.display, title: "test", x: 20, y: 40, width: 160, height: 90)
        try window.draw(step: 10)
        let found = try X11Source.windows(ofProcess: getpid(), display: server.display)
        XCTAssertEqual(found.count, 1)
        let area = try XCTUnwrap(found.first?.area)
        XCTAssertEqual(area, CaptureRect(x: 20, y: 40, width: 160, height: 90))
        // The window's picture through the X11 source: the ground and the bar at x = 40.
        let source = try X11Source(configuration: .init(display: server.display, area: .window(found[0].window), showsCursor: false))
        try source.start()
        defer { source.stop() }
        let pool = try PixelBufferPool(width: 160, height: 90, pixelFormat: .bgra, isFullRange: false)
        let frame = try XCTUnwrap(try source.nextFrame(from: pool))
        let (ground, bar) = frame.pixelBuffer.withReadAccess { planes in
            let p = planes[0]
            let pixel = { (x: Int, y: Int) -> UInt32 in p.baseAddress.load(fromByteOffset: y * p.bytesPerRow + x * 4, as: UInt32.self) & 0xFF_FFFF }
            return (pixel(120, 45), pixel(45, 45))
        }
        XCTAssertEqual(ground, 0x20_4060)
        XCTAssertEqual(bar, 0xF0_F0F0)
    }
}
