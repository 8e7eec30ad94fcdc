import SwiftRecord

/// The monitors GNOME's compositor drives, from `org.gnome.Mutter.DisplayConfig`'s
/// `GetCurrentState`: what `--monitor NAME` chooses from on the Mutter path and
/// `--list-monitors` shows.
extension WaylandSource {
    /// A monitor of the compositor: its connector name and the size of its current mode.
    public struct Monitor: Sendable, Equatable, CustomStringConvertible {
        /// The connector (`Meta-0`, `HDMI-1`): what `Configuration.monitor` takes.
        public var name: String
        /// The current mode's size in pixels (what a screen cast of it streams).
        public var size: VideoSize?
        /// The name people know it by (`Built-in display`, the vendor's), when given.
        public var displayName: String?
        public var isPrimary: Bool
        /// Where it lies on the desktop (its logical monitor's corner in Mutter's layout) at its
        /// mode's size; nil when it is in no logical monitor or has no current mode.
        public var frame: PixelRegion?

        public init(name: String, size: VideoSize?, displayName: String? = nil, isPrimary: Bool = false, frame: PixelRegion? = nil) {
            self.name = name
            self.size = size
            self.displayName = displayName
            self.isPrimary = isPrimary
            self.frame = frame
        }

        public var description: String {
            name + (size.map { " \($0)" } ?? "") + (displayName.map { " (\($0))" } ?? "") + (isPrimary ? " (primary)" : "")
        }
    }

    static let displayConfigBus = "org.gnome.Mutter.DisplayConfig"
    static let displayConfigPath = "/org/gnome/Mutter/DisplayConfig"

    /// The compositor's monitors, through the session bus (GNOME's Mutter only).
    public static func monitors() throws(SwiftRecordError) -> [Monitor] {
        try monitors(connection: DBusConnection())
    }

    static func monitors(connection: DBusConnection) throws(SwiftRecordError) -> [Monitor] {
        let reply: DBusMessage
        do {
            reply = try connection.call(displayConfigBus, displayConfigPath, displayConfigBus, "GetCurrentState")
        } catch {
            throw SwiftRecordError(.io, operation: "wayland",
                                   message: "GNOME's compositor does not list its monitors on this session bus (\(error.message))")
        }
        // (u serial, a((ssss) a(siiddada{sv}) a{sv}) monitors, a(iiduba(ssss)a{sv}) logical monitors, a{sv})
        let values = try reply.readAll()
        guard values.count >= 3, let physical = values[1].array, let logical = values[2].array else {
            throw SwiftRecordError(.invalidData, operation: "wayland", message: "GNOME's compositor answered GetCurrentState in a form swift-record does not know")
        }
        // Logical monitors: (i x, i y, d scale, u transform, b primary, a(ssss) monitors, a{sv}).
        var primary: Set<String> = [], corners: [String: (x: Int, y: Int)] = [:]
        for l in logical {
            guard let fields = l.structure, fields.count >= 6, let specs = fields[5].array else { continue }
            let corner = fields[0].int32.flatMap { x in fields[1].int32.map { (x: Int(x), y: Int($0)) } }
            for spec in specs {
                guard let connector = spec.structure?.first?.string else { continue }
                if fields[4] == .bool(true) { primary.insert(connector) }
                corners[connector] = corner
            }
        }
        return physical.compactMap { m -> Monitor? in
            guard let fields = m.structure, fields.count >= 3, let connector = fields[0].structure?.first?.string else { return nil }
            let current = fields[1].array?.compactMap(\.structure).first { mode in
                mode.count >= 7 && mode[6].dictionary?["is-current"] == .bool(true)
            }
            let size = current.flatMap { mode -> VideoSize? in
                guard let w = mode[1].int32, let h = mode[2].int32 else { return nil }
                return VideoSize(width: Int(w), height: Int(h))
            }
            let frame = corners[connector].flatMap { c in size.map { PixelRegion(x: c.x, y: c.y, width: $0.width, height: $0.height) } }
            return Monitor(name: connector, size: size, displayName: fields[2].dictionary?["display-name"]?.string,
                           isPrimary: primary.contains(connector), frame: frame)
        }
    }
}
