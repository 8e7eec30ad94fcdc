internal import CX11
import Foundation
import SwiftRecord

/// Which windows are a process's own: ReplayKit's in-app capture asks, to record the
/// application's windows rather than the whole screen.
extension X11Source {
    /// The mapped windows of `display` whose `_NET_WM_PID` property is `pid`, with their
    /// areas on the screen, bottom of the stack first: top-level windows, or the client
    /// windows a window manager put in frames. Empty when no window says it is `pid`'s (a
    /// toolkit sets `_NET_WM_PID`; a bare Xlib window does not, and a window of another
    /// machine's process can say any number). A server that does not answer within
    /// `timeout` is an error, as with ``open(configuration:clock:timeout:)``.
    public static func windows(ofProcess pid: Int32, display: String? = nil,
                               timeout: Duration = answerTimeout) throws(SwiftRecordError) -> [(window: UInt, area: CaptureRect)] {
        try answered(display: display, timeout: timeout) { () throws(SwiftRecordError) in try windowsNow(ofProcess: pid, display: display) }
    }

    private static func windowsNow(ofProcess pid: Int32, display: String?) throws(SwiftRecordError) -> [(window: UInt, area: CaptureRect)] {
        let connection = try X11Connection(name: display)
        guard let d = connection.display else { throw connection.lostError }
        let atom = XInternAtom(d, "_NET_WM_PID", 1)
        guard atom != 0 else { return [] }
        var found: [(window: UInt, area: CaptureRect)] = []
        for top in children(of: connection.root, display: d) where isViewable(top, display: d) {
            // Without a window manager the top-level window is the client's; with one, the
            // client is a child of the frame.
            let candidates = [top] + children(of: top, display: d)
            guard let own = candidates.first(where: { processID(of: $0, atom: atom, display: d) == Int(pid) }),
                  let area = try? windowArea(own, connection: connection) else { continue }
            found.append((own, area))
        }
        _ = connection.takeError()
        return found
    }

    private static func children(of window: UInt, display: OpaquePointer) -> [UInt] {
        var root: UInt = 0, parent: UInt = 0
        var list: UnsafeMutablePointer<UInt>?
        var count: UInt32 = 0
        guard XQueryTree(display, window, &root, &parent, &list, &count) != 0, let list else { return [] }
        defer { XFree(list) }
        return Array(UnsafeBufferPointer(start: list, count: Int(count)))
    }

    private static func isViewable(_ window: UInt, display: OpaquePointer) -> Bool {
        var attributes = XWindowAttributes()
        return XGetWindowAttributes(display, window, &attributes) != 0 && attributes.map_state == IsViewable
    }

    /// The window's `_NET_WM_PID` (a 32-bit CARDINAL, which Xlib hands out as a C long).
    private static func processID(of window: UInt, atom: Atom, display: OpaquePointer) -> Int? {
        var type: Atom = 0
        var format: Int32 = 0
        var count: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        guard XGetWindowProperty(display, window, atom, 0, 1, 0, sr_xa_cardinal(), &type, &format, &count, &after, &data) == Success,
              let data else { return nil }
        defer { XFree(data) }
        guard format == 32, count == 1 else { return nil }
        return UnsafeRawPointer(data).loadUnaligned(as: CLong.self)
    }
}
