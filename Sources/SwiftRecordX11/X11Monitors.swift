internal import CX11
import SwiftRecord

/// The monitors of an X screen (RandR 1.5): what `--monitor NAME` records and
/// `--list-monitors` shows.
extension X11Source {
    /// A RandR 1.5 monitor: a named rectangle of the screen, an output's (`HDMI-1`) or one
    /// made with `xrandr --setmonitor`. `xrandr --listmonitors` shows the same list.
    public struct Monitor: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        /// Where it lies on the screen, clipped to the screen.
        public var area: CaptureRect
        public var isPrimary: Bool

        public init(name: String, area: CaptureRect, isPrimary: Bool = false) {
            self.name = name
            self.area = area
            self.isPrimary = isPrimary
        }

        public var description: String { "\(name) \(area.width)x\(area.height) at \(area.x),\(area.y)\(isPrimary ? " (primary)" : "")" }
    }

    /// The active monitors of `display` (nil: `$DISPLAY`).
    public static func monitors(display: String? = nil) throws(SwiftRecordError) -> [Monitor] {
        try monitors(connection: X11Connection(name: display))
    }

    static func monitors(connection: X11Connection) throws(SwiftRecordError) -> [Monitor] {
        guard let display = connection.display else { throw connection.lostError }
        try XRandRLibrary.load()
        var event: Int32 = 0, error: Int32 = 0, major: Int32 = 0, minor: Int32 = 0
        let offered = X11Connection.serialized { XRRQueryExtension(display, &event, &error) != 0 && XRRQueryVersion(display, &major, &minor) != 0 }
        guard offered,
              major > 1 || (major == 1 && minor >= 5) else {
            throw SwiftRecordError(.unsupported, operation: "monitor",
                                   message: "display \(connection.name) has no RandR 1.5 extension, so no monitors to choose from; record a part of it with --region x,y,w,h instead")
        }
        var count: Int32 = 0
        guard let list = XRRGetMonitors(display, connection.root, 1, &count) else { return [] }
        defer { XRRFreeMonitors(list) }
        let screen = CaptureRect(x: 0, y: 0, width: connection.screenWidth, height: connection.screenHeight)
        return (0..<Int(max(count, 0))).map { i in
            let m = list[i]
            var name = "monitor-\(i)"
            if let atom = XGetAtomName(display, m.name) {
                name = String(cString: atom)
                XFree(atom)
            }
            let x0 = max(Int(m.x), screen.x), y0 = max(Int(m.y), screen.y)
            let x1 = min(Int(m.x) + Int(m.width), screen.width), y1 = min(Int(m.y) + Int(m.height), screen.height)
            return Monitor(name: name, area: CaptureRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0)),
                           isPrimary: m.primary != 0)
        }
    }

    /// The area of monitor `name` on `connection`'s screen; an unknown name is an error
    /// listing the monitors there are.
    static func monitorArea(_ name: String, connection: X11Connection) throws(SwiftRecordError) -> CaptureRect {
        let all = try monitors(connection: connection)
        guard let monitor = all.first(where: { $0.name == name }), monitor.area.width > 0, monitor.area.height > 0 else {
            let list = all.isEmpty ? "none" : all.map(\.description).joined(separator: ", ")
            throw SwiftRecordError(.invalidArgument, operation: "monitor",
                                   message: "display \(connection.name) has no monitor '\(name)'; its monitors: \(list) (swift-record --list-monitors shows them)")
        }
        return monitor.area
    }
}
