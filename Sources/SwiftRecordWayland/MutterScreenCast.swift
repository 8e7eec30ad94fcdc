import Foundation
import SwiftRecord
import SwiftRecordPipeWire

/// A screen cast of one monitor through GNOME's compositor (`org.gnome.Mutter.ScreenCast`,
/// no chooser): `CreateSession`, `RecordMonitor`, `Start`, and the PipeWire node id from the
/// stream's `PipeWireStreamAdded` signal.
///
/// Mutter ends a session when the connection that made it goes away, so the one connection
/// made here is held until `stop()`; it also hears the session's `Closed` signal (the
/// compositor ending the cast).
final class MutterScreenCast {
    static let busName = "org.gnome.Mutter.ScreenCast"
    static let objectPath = "/org/gnome/Mutter/ScreenCast"
    static let sessionInterface = "org.gnome.Mutter.ScreenCast.Session"
    static let streamInterface = "org.gnome.Mutter.ScreenCast.Stream"

    private let connection: DBusConnection
    let sessionPath: String
    let streamPath: String
    /// The PipeWire node the pictures come from.
    let node: UInt32
    private var started = true

    /// Asks Mutter for `monitor` (a connector name such as `Meta-0` or `HDMI-1`; nil: the
    /// primary monitor) with the cursor as `cursor` says, and waits until `deadline`
    /// (monotonic nanoseconds) for the stream's PipeWire node.
    init(monitor: String?, cursor: CursorMode, deadline: Int64) throws(SwiftRecordError) {
        let connection = try DBusConnection()
        self.connection = connection
        let session: String
        do {
            session = try connection.call(MutterScreenCast.busName, MutterScreenCast.objectPath, MutterScreenCast.busName, "CreateSession",
                                          [.options([:])]).read()?.string ?? ""
        } catch {
            throw SwiftRecordError(.io, operation: "wayland",
                                   message: "GNOME's compositor does not offer screen casting on this session bus (\(error.message)); --screencast mutter needs GNOME Shell or mutter running in this session; other desktops: --screencast portal (the desktop portal, with its chooser; the default when one answers on the session bus); nothing was recorded")
        }
        sessionPath = session
        let stream: String
        do {
            stream = try connection.call(MutterScreenCast.busName, session, MutterScreenCast.sessionInterface, "RecordMonitor",
                                         [.string(monitor ?? ""), .options(["cursor-mode": .uint32(cursor.rawValue)])]).read()?.string ?? ""
        } catch {
            _ = try? connection.call(MutterScreenCast.busName, session, MutterScreenCast.sessionInterface, "Stop")
            // As on X11: the monitors there are, so the next try can name one.
            let known = (try? WaylandSource.monitors(connection: connection)).map { list in
                list.isEmpty ? "; the compositor lists no monitors"
                    : "; its monitors: \(list.map(\.description).joined(separator: ", ")) (swift-record --list-monitors shows them)"
            } ?? ""
            throw SwiftRecordError(.invalidArgument, operation: "wayland",
                                   message: "Mutter cannot record monitor \(monitor.map { "'\($0)'" } ?? "(primary)"): \(error.message)\(known); nothing was recorded")
        }
        streamPath = stream
        try connection.subscribe(path: stream, interface: MutterScreenCast.streamInterface, member: "PipeWireStreamAdded")
        try connection.subscribe(path: session, interface: MutterScreenCast.sessionInterface, member: "Closed")
        // A compositor that dies sends no Closed: its bus name going is the sign.
        try connection.subscribe(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
        _ = try connection.call(MutterScreenCast.busName, session, MutterScreenCast.sessionInterface, "Start")
        let found = try connection.waitForSignal(untilNanoseconds: deadline) { (message: DBusMessage) throws(SwiftRecordError) -> UInt32? in
            if message.member == "Closed" || MutterScreenCast.isCompositorGone(message) {
                throw SwiftRecordError(.io, operation: "wayland", message: "Mutter closed the screen-cast session as it started; nothing was recorded")
            }
            return message.member == "PipeWireStreamAdded" ? try message.read()?.uint32 : nil
        }
        guard let found else {
            _ = try? connection.call(MutterScreenCast.busName, session, MutterScreenCast.sessionInterface, "Stop")
            throw SwiftRecordError(.io, operation: "wayland", message: "Mutter started the screen cast but gave no PipeWire stream in time; nothing was recorded")
        }
        node = found
    }

    /// Throws when Mutter closed the session (the compositor ending the cast) or left the
    /// bus (the compositor gone).
    func checkOpen() throws(SwiftRecordError) {
        for message in try connection.takeSignals() {
            if message.member == "Closed" {
                throw SwiftRecordError(.io, operation: "wayland", message: "the compositor closed the screen-cast session")
            }
            if MutterScreenCast.isCompositorGone(message) {
                throw SwiftRecordError(.io, operation: "wayland", message: "the compositor went away (org.gnome.Mutter.ScreenCast left the session bus)")
            }
        }
    }

    /// True for the bus's NameOwnerChanged saying Mutter's screen-cast name lost its owner.
    private static func isCompositorGone(_ message: DBusMessage) -> Bool {
        guard message.member == "NameOwnerChanged", let values = try? message.readAll(), values.count == 3 else { return false }
        return values[0].string == busName && values[2].string == ""
    }

    /// Ends the session (the connection closes when this object goes).
    func stop() {
        guard started else { return }
        started = false
        _ = try? connection.call(MutterScreenCast.busName, sessionPath, MutterScreenCast.sessionInterface, "Stop", timeout: .seconds(1))
    }
}
