import Foundation
import SwiftRecord
import SystemPackage

/// A screen cast through the desktop portal (`org.freedesktop.portal.ScreenCast` on the
/// session bus): what GNOME, KDE and wlroots desktops offer every program, with the desktop's
/// own chooser.
///
/// Making one runs the portal's conversation on one D-Bus connection: `CreateSession`,
/// `SelectSources` (monitors and/or windows, the cursor mode, `persist_mode` 2 and a restore
/// token when one is given), then `Start`, which shows the chooser (skipped when the restore
/// token is still valid) and answers with the PipeWire streams and a new restore token. Each
/// step's answer comes as the `Response` signal of a request object (0 granted, 1 cancelled
/// by the user, 2 ended otherwise). ``openPipeWireRemote()`` then hands over a connection to
/// PipeWire that can see only the granted streams.
///
/// The session lives as long as this object and its connection: ``close()`` (or releasing
/// the object) ends it. An application that reads the stream itself takes ``streams`` and
/// the descriptor; `WaylandSource` does both for a recording:
///
/// ```swift
/// let portal = try ScreenCastPortal(options: .init(sourceTypes: .monitor))
/// let remote = try portal.openPipeWireRemote()
/// print("PipeWire node \(portal.streams[0].node) on descriptor \(remote.rawValue)")
/// ```
///
/// Not thread-safe: one owner at a time, like the D-Bus connection it holds.
public final class ScreenCastPortal {
    /// The portal's bus name.
    public static let busName = "org.freedesktop.portal.Desktop"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.ScreenCast"
    static let requestInterface = "org.freedesktop.portal.Request"
    static let sessionInterface = "org.freedesktop.portal.Session"

    /// What the chooser may offer (the portal's `types` bits).
    public struct SourceTypes: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Whole monitors.
        public static let monitor = SourceTypes(rawValue: 1)
        /// Single windows.
        public static let window = SourceTypes(rawValue: 2)
    }

    /// How the cursor comes with the pictures (the portal's `cursor_mode`).
    public enum Cursor: UInt32, Sendable {
        /// Left out.
        case hidden = 1
        /// Drawn into the pictures by the compositor.
        case embedded = 2
        /// Sent beside the pictures as PipeWire metadata (`SPA_META_Cursor`).
        case metadata = 4
    }

    /// What to ask the portal for.
    public struct Options: Sendable, Equatable {
        /// What the chooser offers.
        public var sourceTypes: SourceTypes
        /// The cursor; when the portal cannot do this mode, its own default is taken.
        public var cursor: Cursor
        /// A token a previous session gave (``ScreenCastPortal/restoreToken``): the portal
        /// grants the same sources again without the chooser while the token is valid.
        public var restoreToken: String?
        /// Ask for a new restore token valid until revoked (`persist_mode` 2); false: none.
        public var persists: Bool
        /// How long each step without the user may take (creating the session, selecting).
        public var timeout: Duration
        /// How long the chooser may stay open (the user deciding).
        public var chooserTimeout: Duration

        public init(sourceTypes: SourceTypes = [.monitor, .window], cursor: Cursor = .embedded, restoreToken: String? = nil,
                    persists: Bool = true, timeout: Duration = .seconds(10), chooserTimeout: Duration = .seconds(300)) {
            self.sourceTypes = sourceTypes
            self.cursor = cursor
            self.restoreToken = restoreToken
            self.persists = persists
            self.timeout = timeout
            self.chooserTimeout = chooserTimeout
        }
    }

    /// One granted stream: its PipeWire node and what the portal says about it.
    public struct Stream: Sendable, Equatable {
        /// The PipeWire node to connect a stream to (through ``ScreenCastPortal/openPipeWireRemote()``).
        public let node: UInt32
        /// Its size in pixels, when the portal says.
        public let size: VideoSize?
        /// Where it sits in the desktop's coordinates, when the portal says.
        public let position: (x: Int, y: Int)?
        /// A monitor or a window, when the portal says.
        public let sourceType: SourceTypes?

        public static func == (a: Stream, b: Stream) -> Bool {
            a.node == b.node && a.size == b.size && a.position?.x == b.position?.x && a.position?.y == b.position?.y
                && a.sourceType == b.sourceType
        }
    }

    /// The streams the user (or the restore token) granted; at least one.
    public let streams: [Stream]
    /// The token that grants the same sources next time without the chooser; nil when the
    /// portal gave none (it may not persist, or persisting was not asked for).
    public let restoreToken: String?
    /// The session's object path on the bus.
    public let sessionPath: String

    private let connection: DBusConnection
    private var open = true

    /// Asks the portal for a screen cast and waits until it is granted: the chooser's time
    /// included. Throws a `SwiftRecordError` of kind `.cancelled` when the user cancels the
    /// chooser, and one naming what to install when no portal answers.
    public convenience init(options: Options = Options()) throws(SwiftRecordError) {
        try self.init(options: options, stoppedBy: nil)
    }

    /// The same, given up at once (a `.cancelled` error; the request and the session closed,
    /// so the desktop's chooser goes away) when `stop` is interrupted: a Ctrl-C while the
    /// chooser is open.
    package init(options: Options, stoppedBy stop: WakeUp?) throws(SwiftRecordError) {
        let connection = try DBusConnection()
        self.connection = connection
        let sender = String((connection.uniqueName ?? ":0").dropFirst()).replacingOccurrences(of: ".", with: "_")
        let tokenBase = "swift_record_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"

        let available: UInt32
        do {
            available = try connection.call(ScreenCastPortal.busName, ScreenCastPortal.objectPath, "org.freedesktop.DBus.Properties", "Get",
                                            [.string(ScreenCastPortal.interface), .string("AvailableCursorModes")],
                                            timeout: options.timeout).read()?.uint32 ?? 0
        } catch {
            throw ScreenCastPortal.missing(error)
        }
        let steps = Steps(connection: connection, sender: sender, timeout: options.timeout, stop: stop)
        let created = try steps.request("CreateSession", token: tokenBase + "_create", [
            .options(["handle_token": .string(tokenBase + "_create"), "session_handle_token": .string(tokenBase)]),
        ], deadline: MonotonicClock.deadline(after: options.timeout))
        guard let session = created["session_handle"]?.string, !session.isEmpty else {
            throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal made a screen-cast session but did not say which; nothing was recorded")
        }
        sessionPath = session
        do throws(SwiftRecordError) {
            try connection.subscribe(path: session, interface: ScreenCastPortal.sessionInterface, member: "Closed")
            try connection.subscribe(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
            var select: [String: DBusValue] = ["handle_token": .string(tokenBase + "_select"), "types": .uint32(options.sourceTypes.rawValue),
                                               "multiple": .bool(false), "persist_mode": .uint32(options.persists ? 2 : 0)]
            if available & options.cursor.rawValue != 0 { select["cursor_mode"] = .uint32(options.cursor.rawValue) }
            if let token = options.restoreToken { select["restore_token"] = .string(token) }
            _ = try steps.request("SelectSources", token: tokenBase + "_select", [.objectPath(session), .options(select)],
                                  deadline: MonotonicClock.deadline(after: options.timeout))
            let started = try steps.request("Start", token: tokenBase + "_start", [
                .objectPath(session), .string(""), .options(["handle_token": .string(tokenBase + "_start")]),
            ], deadline: MonotonicClock.deadline(after: options.chooserTimeout))
            let granted = (started["streams"]?.array ?? []).compactMap(ScreenCastPortal.stream)
            guard !granted.isEmpty else {
                throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal granted the screen cast but gave no stream; nothing was recorded")
            }
            streams = granted
            restoreToken = started["restore_token"]?.string
        } catch {
            _ = try? connection.call(ScreenCastPortal.busName, session, ScreenCastPortal.sessionInterface, "Close", timeout: .seconds(1))
            throw error
        }
    }

    deinit { close() }

    /// A connection to PipeWire that sees the granted streams: a descriptor the caller owns
    /// (libpipewire's `pw_context_connect_fd` takes it over).
    public func openPipeWireRemote() throws(SwiftRecordError) -> FileDescriptor {
        do {
            let reply = try connection.call(ScreenCastPortal.busName, ScreenCastPortal.objectPath, ScreenCastPortal.interface, "OpenPipeWireRemote",
                                            [.objectPath(sessionPath), .options([:])])
            return FileDescriptor(rawValue: try reply.readFileDescriptor())
        } catch {
            throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal did not open a PipeWire connection: \(error.message); nothing was recorded")
        }
    }

    /// Throws when the portal closed the session (the desktop ending the cast, the user
    /// revoking it) or left the bus.
    public func checkOpen() throws(SwiftRecordError) {
        for message in try connection.takeSignals() {
            if message.member == "Closed" && message.path == sessionPath {
                throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal closed the screen-cast session")
            }
            if message.member == "NameOwnerChanged", let values = try? message.readAll(), values.count == 3,
               values[0].string == ScreenCastPortal.busName, values[2].string == "" {
                throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal went away (org.freedesktop.portal.Desktop left the session bus)")
            }
        }
    }

    /// Ends the session. Safe to call more than once; the connection goes with the object.
    public func close() {
        guard open else { return }
        open = false
        _ = try? connection.call(ScreenCastPortal.busName, sessionPath, ScreenCastPortal.sessionInterface, "Close", timeout: .seconds(1))
    }

    /// Whether a desktop portal with screen casting answers on the session bus (starting it
    /// if the bus can): what the command line checks before choosing the portal.
    public static func isAvailable(timeout: Duration = .seconds(5)) -> Bool {
        guard let connection = try? DBusConnection() else { return false }
        let version = try? connection.call(busName, objectPath, "org.freedesktop.DBus.Properties", "Get",
                                           [.string(interface), .string("version")], timeout: timeout).read()
        return version?.uint32 != nil
    }

    /// The portal is not there, or has no screen casting.
    private static func missing(_ error: SwiftRecordError) -> SwiftRecordError {
        SwiftRecordError(.io, operation: "portal",
                         message: "no desktop portal with screen casting answers on the session bus (\(error.message)); --screencast portal needs the xdg-desktop-portal package and a backend for the desktop (xdg-desktop-portal-gnome, -kde or -wlr) running in this session, or --screencast mutter on GNOME; nothing was recorded")
    }

    /// A stream of `Start`'s answer: `(u node, a{sv} properties)`.
    private static func stream(_ value: DBusValue) -> Stream? {
        guard let parts = value.structure, parts.count == 2, let node = parts[0].uint32 else { return nil }
        let properties = parts[1].dictionary ?? [:]
        func pair(_ key: String) -> (Int, Int)? {
            guard let s = properties[key]?.structure, s.count == 2, let a = s[0].int32, let b = s[1].int32 else { return nil }
            return (Int(a), Int(b))
        }
        return Stream(node: node, size: pair("size").map { VideoSize(width: $0.0, height: $0.1) },
                      position: pair("position").map { (x: $0.0, y: $0.1) },
                      sourceType: properties["source_type"]?.uint32.map(SourceTypes.init(rawValue:)))
    }
}

/// The portal's request–response steps on one connection.
private struct Steps {
    let connection: DBusConnection
    let sender: String
    let timeout: Duration
    let stop: WakeUp?

    /// Calls `method`, whose answer comes as the `Response` signal of the request object
    /// named by `token`, and waits for it until `deadline`: the results when granted.
    func request(_ method: String, token: String, _ arguments: [DBusConnection.Argument], deadline: Int64) throws(SwiftRecordError) -> [String: DBusValue] {
        let expected = "\(ScreenCastPortal.objectPath)/request/\(sender)/\(token)"
        // Subscribed before the call: the answer may come before the call's reply.
        try connection.subscribe(path: expected, interface: ScreenCastPortal.requestInterface, member: "Response")
        let handle: String
        do {
            handle = try connection.call(ScreenCastPortal.busName, ScreenCastPortal.objectPath, ScreenCastPortal.interface, method, arguments,
                                         timeout: timeout).read()?.string ?? expected
        } catch {
            throw SwiftRecordError(.io, operation: "portal", message: "the desktop portal refused \(method): \(error.message); nothing was recorded")
        }
        if handle != expected {
            // A portal older than 0.9 names its own request objects.
            try connection.subscribe(path: handle, interface: ScreenCastPortal.requestInterface, member: "Response")
        }
        let answer: (UInt32, [String: DBusValue])?
        do {
            answer = try connection.waitForSignal(untilNanoseconds: deadline, stoppedBy: stop) { (message: DBusMessage) throws(SwiftRecordError) -> (UInt32, [String: DBusValue])? in
                guard message.member == "Response", message.path == handle else { return nil }
                let code = try message.read()?.uint32 ?? 2
                return (code, try message.read()?.dictionary ?? [:])
            }
        } catch where error.kind == .cancelled {
            _ = try? connection.call(ScreenCastPortal.busName, handle, ScreenCastPortal.requestInterface, "Close", timeout: .seconds(1))
            let waiting = method == "Start" ? "while the desktop's chooser was open" : "while waiting for the desktop portal (\(method))"
            throw SwiftRecordError(.cancelled, operation: "portal", message: "stopped \(waiting); nothing was recorded")
        }
        guard let (code, results) = answer else {
            _ = try? connection.call(ScreenCastPortal.busName, handle, ScreenCastPortal.requestInterface, "Close", timeout: .seconds(1))
            let wait = method == "Start" ? "the chooser was not answered" : "the desktop portal did not answer \(method)"
            throw SwiftRecordError(.io, operation: "portal", message: "\(wait) in time; nothing was recorded")
        }
        switch code {
        case 0:
            return results
        case 1:
            throw SwiftRecordError(.cancelled, operation: "portal",
                                   message: "the screen cast was cancelled in the desktop's chooser (\(method): portal response 1); nothing was recorded")
        default:
            throw SwiftRecordError(.io, operation: "portal",
                                   message: "the desktop portal ended the screen-cast request (\(method): portal response \(code)); nothing was recorded")
        }
    }
}
