internal import CX11
import Foundation
import SwiftRecord

/// The top-level windows of a display (ScreenCaptureKit's shareable windows), and which
/// of them are a process's own (ReplayKit's in-app capture asks, to record the
/// application's windows rather than the whole screen).
extension X11Source {
    /// One top-level window: the client window (inside a window manager's frame, if any).
    public struct Window: Sendable, Equatable {
        /// The X11 window id.
        public var id: UInt
        /// `_NET_WM_NAME` (UTF-8), else `WM_NAME`; nil when it has neither.
        public var title: String?
        /// Its area on the screen (clipped to the screen).
        public var area: CaptureRect
        /// Its `_NET_WM_PID`, set by toolkits (a bare Xlib window has none).
        public var processID: Int32?
        /// Mapped and viewable.
        public var isOnScreen: Bool
    }

    /// The top-level windows of `display`, bottom of the stack first: the windows a
    /// window manager put in frames, or the top-level windows themselves without one. A
    /// server that does not answer within `timeout` is an error, as with
    /// ``open(configuration:clock:timeout:)``.
    public static func windows(display: String? = nil, timeout: Duration = answerTimeout) throws(SwiftRecordError) -> [Window] {
        try answered(display: display, timeout: timeout) { () throws(SwiftRecordError) in try windowsNow(display: display) }
    }

    /// The mapped windows of `display` whose `_NET_WM_PID` property is `pid`, with their
    /// areas on the screen, bottom of the stack first (see ``windows(display:timeout:)``).
    /// Empty when no window says it is `pid`'s (a toolkit sets `_NET_WM_PID`; a bare Xlib
    /// window does not, and a window of another machine's process can say any number).
    public static func windows(ofProcess pid: Int32, display: String? = nil,
                               timeout: Duration = answerTimeout) throws(SwiftRecordError) -> [(window: UInt, area: CaptureRect)] {
        try windows(display: display, timeout: timeout).filter { $0.isOnScreen && $0.processID == pid }.map { ($0.id, $0.area) }
    }

    private static func windowsNow(display: String?) throws(SwiftRecordError) -> [Window] {
        let connection = try X11Connection(name: display)
        guard let d = connection.display else { throw connection.lostError }
        let pidAtom = XInternAtom(d, "_NET_WM_PID", 1)
        let nameAtom = XInternAtom(d, "_NET_WM_NAME", 1), utf8 = XInternAtom(d, "UTF8_STRING", 1)
        var found: [Window] = []
        for top in children(of: connection.root, display: d) {
            // Without a window manager the top-level window is the client's; with one, the
            // client is a child of the frame: the first that names a process or a title.
            let candidates = [top] + children(of: top, display: d)
            let pids = candidates.map { pidAtom == 0 ? nil : processID(of: $0, atom: pidAtom, display: d) }
            let titles = candidates.map { title(of: $0, nameAtom: nameAtom, utf8: utf8, display: d) }
            let pick = candidates.indices.first { pids[$0] != nil } ?? candidates.indices.first { titles[$0] != nil } ?? 0
            guard let area = try? windowArea(candidates[pick], connection: connection) else { continue }
            found.append(Window(id: candidates[pick], title: titles[pick], area: area, processID: pids[pick].map { Int32(truncatingIfNeeded: $0) },
                                isOnScreen: isViewable(top, display: d)))
        }
        _ = connection.takeError()
        return found
    }

    /// `_NET_WM_NAME` as UTF-8, else `WM_NAME` (Latin-1 in principle, taken as UTF-8).
    private static func title(of window: UInt, nameAtom: Atom, utf8: Atom, display: OpaquePointer) -> String? {
        if nameAtom != 0, utf8 != 0 {
            var type: Atom = 0
            var format: Int32 = 0
            var count: UInt = 0, after: UInt = 0
            var data: UnsafeMutablePointer<UInt8>?
            if XGetWindowProperty(display, window, nameAtom, 0, 1024, 0, utf8, &type, &format, &count, &after, &data) == Success, let data {
                defer { XFree(data) }
                if format == 8, count > 0 { return String(decoding: UnsafeBufferPointer(start: data, count: Int(count)), as: UTF8.self) }
            }
        }
        var name: UnsafeMutablePointer<CChar>?
        guard XFetchName(display, window, &name) != 0, let name else { return nil }
        defer { XFree(name) }
        return String(cString: name)
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
