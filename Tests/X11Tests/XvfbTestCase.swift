import CX11
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Draws known content on an X display from the test itself (Xlib): solid rectangles on
/// the root window, plain windows, the pointer position.
final class XPainter {
    let display: OpaquePointer
    let root: UInt
    let screen: Int32

    init(_ server: XvfbServer) throws {
        guard let d = XOpenDisplay(server.display) else { throw TestError.failed("cannot open \(server.display)") }
        display = d
        screen = XDefaultScreen(d)
        root = XRootWindow(d, screen)
    }

    deinit { XCloseDisplay(display) }

    /// Fills a rectangle of the root window with 0xRRGGBB.
    func fill(x: Int, y: Int, width: Int, height: Int, rgb: UInt32) {
        let gc = XCreateGC(display, root, 0, nil)
        XSetForeground(display, gc, UInt(rgb))
        XFillRectangle(display, root, gc, Int32(x), Int32(y), UInt32(width), UInt32(height))
        XFreeGC(display, gc)
        XSync(display, 0)
    }

    /// A mapped window filled with 0xRRGGBB (no window manager: it stays where it is put).
    func window(x: Int, y: Int, width: Int, height: Int, rgb: UInt32) -> UInt {
        let w = XCreateSimpleWindow(display, root, Int32(x), Int32(y), UInt32(width), UInt32(height), 0, 0, UInt(rgb))
        XMapRaised(display, w)
        XSync(display, 0)
        return w
    }

    func move(_ window: UInt, x: Int, y: Int) {
        XMoveWindow(display, window, Int32(x), Int32(y))
        XSync(display, 0)
    }

    func destroy(_ window: UInt) {
        XDestroyWindow(display, window)
        XSync(display, 0)
    }

    func movePointer(x: Int, y: Int) {
        XWarpPointer(display, 0, root, 0, 0, 0, 0, Int32(x), Int32(y))
        XSync(display, 0)
    }
}

/// A test class with a private Xvfb of its own, started before its first test and stopped
/// after its last (`xvfb`; nil when Xvfb is missing or did not start); each test gets it as
/// `server` (skipped without Xvfb) and a directory of its own (MediaTestCase).
class XvfbTestCase: MediaTestCase {
    nonisolated(unsafe) private static var servers: [ObjectIdentifier: XvfbServer] = [:]

    override class func setUp() {
        super.setUp()
        if XvfbServer.isInstalled { servers[ObjectIdentifier(self)] = try? XvfbServer() }
    }

    override class func tearDown() {
        servers.removeValue(forKey: ObjectIdentifier(self))?.stop()
        super.tearDown()
    }

    /// This class's server.
    var xvfb: XvfbServer? { XvfbTestCase.servers[ObjectIdentifier(type(of: self))] }
    /// This class's server, for the test running.
    var server: XvfbServer!

    override func setUpWithError() throws {
        try XCTSkipUnless(XvfbServer.isInstalled, "Xvfb is not installed (apt-get install xvfb)")
        try super.setUpWithError()
        server = try XCTUnwrap(xvfb, "Xvfb did not start")
    }
}
