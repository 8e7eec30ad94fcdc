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

        public init(name: String, size: VideoSize?, displayName: String? = nil, isPrimary: Bool = false) {
            self.name = name
            self.size = size
            self.displayName = displayName
            self.isPrimary = isPrimary
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
        var primary: Set<String> = []
        for l in logical {
            guard let fields = l.structure, fields.count >= 6, fields[4] == .bool(true), let specs = fields[5].array else { continue }
            for spec in specs { if let connector = spec.structure?.first?.string { primary.insert(connector) } }
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
            return Monitor(name: connector, size: size, displayName: fields[2].dictionary?["display-name"]?.string,
                           isPrimary: primary.contains(connector))
        }
    }
}
