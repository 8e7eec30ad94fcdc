internal import CSDBus
import Foundation
import SwiftRecord

/// A D-Bus value as the screen-cast interfaces use them: in an `a{sv}` of options, a reply,
/// a signal's arguments.
enum DBusValue: Sendable, Equatable {
    case uint32(UInt32)
    case int32(Int32)
    case uint64(UInt64)
    case int64(Int64)
    case bool(Bool)
    case string(String)
    case objectPath(String)
    case array([DBusValue])
    case dictionary([String: DBusValue])
    case structure([DBusValue])
    /// A type this reader does not turn into a value (skipped, e.g. a file descriptor in a variant).
    case other(String)

    var uint32: UInt32? { if case .uint32(let v) = self { return v }; return nil }
    var string: String? {
        switch self {
        case .string(let s), .objectPath(let s): return s
        default: return nil
        }
    }
    var array: [DBusValue]? { if case .array(let a) = self { return a }; return nil }
    var dictionary: [String: DBusValue]? { if case .dictionary(let d) = self { return d }; return nil }
    var structure: [DBusValue]? { if case .structure(let s) = self { return s }; return nil }
    var int32: Int32? { if case .int32(let v) = self { return v }; return nil }
}

/// One received D-Bus message (a method's reply or a signal): the one owner of its
/// `sd_bus_message` reference, read front to back.
final class DBusMessage {
    fileprivate let message: OpaquePointer

    /// Takes over a reference the caller holds.
    fileprivate init(adopting message: OpaquePointer) { self.message = message }
    deinit { sd_bus_message_unref(message) }

    var member: String { sd_bus_message_get_member(message).map { String(cString: $0) } ?? "" }
    var path: String { sd_bus_message_get_path(message).map { String(cString: $0) } ?? "" }

    /// The next argument, whatever its type; nil at the end.
    func read() throws(SwiftRecordError) -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let r = sd_bus_message_peek_type(message, &type, &contents)
        if r == 0 { return nil }
        try DBusConnection.check(r, "reading a D-Bus message")
        let signature = contents.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "u"): var v: UInt32 = 0; try basic(type, &v); return .uint32(v)
        case UInt8(ascii: "i"): var v: Int32 = 0; try basic(type, &v); return .int32(v)
        case UInt8(ascii: "t"): var v: UInt64 = 0; try basic(type, &v); return .uint64(v)
        case UInt8(ascii: "x"): var v: Int64 = 0; try basic(type, &v); return .int64(v)
        case UInt8(ascii: "b"): var v: Int32 = 0; try basic(type, &v); return .bool(v != 0)
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var p: UnsafePointer<CChar>?
            try basic(type, &p)
            let s = p.map { String(cString: $0) } ?? ""
            return UInt8(bitPattern: type) == UInt8(ascii: "o") ? .objectPath(s) : .string(s)
        case UInt8(ascii: "v"):
            try enter(type, signature)
            defer { sd_bus_message_exit_container(message) }
            return try read() ?? .other("v")
        case UInt8(ascii: "a"):
            try enter(type, signature)
            defer { sd_bus_message_exit_container(message) }
            if signature.hasPrefix("{") {
                var dictionary: [String: DBusValue] = [:]
                while sd_bus_message_at_end(message, 0) == 0 {
                    try enter(CChar(UInt8(ascii: "e")), String(signature.dropFirst().dropLast()))
                    let key = try read()
                    let value = try read()
                    sd_bus_message_exit_container(message)
                    if let key = key?.string ?? key.map({ "\($0)" }), let value { dictionary[key] = value }
                }
                return .dictionary(dictionary)
            }
            var items: [DBusValue] = []
            while sd_bus_message_at_end(message, 0) == 0, let item = try read() { items.append(item) }
            return .array(items)
        case UInt8(ascii: "r"):
            try enter(type, signature)
            defer { sd_bus_message_exit_container(message) }
            var items: [DBusValue] = []
            while let item = try read() { items.append(item) }
            return .structure(items)
        default:
            try DBusConnection.check(sd_bus_message_skip(message, nil), "skipping a D-Bus value")
            return .other(String(UInt8(bitPattern: type)))
        }
    }

    /// The next argument, which must be a Unix file descriptor: a duplicate the caller owns.
    func readFileDescriptor() throws(SwiftRecordError) -> Int32 {
        var fd: Int32 = -1
        try basic(CChar(UInt8(ascii: "h")), &fd)
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw SwiftRecordError(.io, operation: "dbus", message: "cannot keep the file descriptor a D-Bus reply carried: \(String(cString: strerror(errno)))") }
        return copy
    }

    /// All arguments from here to the end.
    func readAll() throws(SwiftRecordError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let v = try read() { values.append(v) }
        return values
    }

    private func basic<T>(_ type: CChar, _ value: inout T) throws(SwiftRecordError) {
        try DBusConnection.check(withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, type, $0) }, "reading a D-Bus value")
    }

    private func enter(_ type: CChar, _ contents: String) throws(SwiftRecordError) {
        try DBusConnection.check(sd_bus_message_enter_container(message, type, contents), "reading a D-Bus container")
    }
}

/// Signals matched on a connection, kept until read (the match callback's user data).
private final class SignalInbox {
    var messages: [DBusMessage] = []
}

/// One connection to the session bus: the one owner of an `sd_bus` and its signal matches.
///
/// Not thread-safe, like the `sd_bus` it wraps: it has one owner at a time, which the
/// Wayland source keeps inside its `Locked` state. Everything that waits on the bus (a
/// call, a signal) has a deadline.
///
/// Why sd-bus (libsystemd): a C API kept by systemd and installed on every systemd
/// distribution; synchronous calls with a timeout (`sd_bus_call`), signal matches in place
/// when the call returns, `sd_bus_wait` with a timeout, no main loop to run, and file
/// descriptors in messages (the portal's `OpenPipeWireRemote`). Its variadic helpers
/// (`sd_bus_call_method`, `sd_bus_message_append`) cannot be imported, so messages are built
/// and read with `append_basic`/`open_container`/`read_basic`/`enter_container`. Not
/// libdbus-1: its documentation keeps the low-level API for bindings, messages are read
/// through iterators, and a wait with a deadline needs its main-loop hooks. Not libportal or
/// GDBus: both need a running GLib main context and GObject lifetimes beside our threads,
/// and libportal speaks only the portal, not Mutter's interface.
final class DBusConnection {
    private let bus: OpaquePointer
    private let inbox = SignalInbox()
    private var slots: [OpaquePointer] = []

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
    init() throws(SwiftRecordError) {
        try SDBusLibrary.load()
        var bus: OpaquePointer?
        let r = sd_bus_open_user(&bus)
        guard r >= 0, let bus else {
            throw SwiftRecordError(.io, operation: "dbus",
                                   message: "cannot connect to the D-Bus session bus (\(DBusConnection.describe(r))); a Wayland session has one: is DBUS_SESSION_BUS_ADDRESS or XDG_RUNTIME_DIR set?")
        }
        self.bus = bus
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// The connection's own unique name (`:1.42`), which the portal's request paths are made from.
    var uniqueName: String? {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    static func describe(_ r: Int32) -> String { String(cString: strerror(-r)) }

    static func check(_ r: Int32, _ what: String) throws(SwiftRecordError) {
        if r < 0 { throw SwiftRecordError(.io, operation: "dbus", message: "\(what): \(describe(r))") }
    }

    /// An argument of a method call.
    enum Argument {
        case string(String)
        case objectPath(String)
        case uint32(UInt32)
        case options([String: DBusValue])
    }

    /// Calls `interface.member` on `path` of `destination` and waits for the reply until
    /// `timeout`. A D-Bus error reply throws with its name and message.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [Argument] = [],
              timeout: Duration = .seconds(5)) throws(SwiftRecordError) -> DBusMessage {
        var m: OpaquePointer?
        try DBusConnection.check(sd_bus_message_new_method_call(bus, &m, destination, path, interface, member), "\(interface).\(member)")
        guard let m else { throw SwiftRecordError(.io, operation: "dbus", message: "\(interface).\(member): no message") }
        defer { sd_bus_message_unref(m) }
        for argument in arguments { try append(argument, to: m) }
        var error = sr_sd_bus_error_null()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let (seconds, attoseconds) = timeout.components
        let r = sd_bus_call(bus, m, UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000), &error, &reply)
        guard r >= 0, let reply else {
            let name = error.name.map { String(cString: $0) }
            let text = error.message.map { String(cString: $0) } ?? DBusConnection.describe(r)
            throw SwiftRecordError(.io, operation: "dbus", message: "\(interface).\(member) failed: \(name.map { "\($0): " } ?? "")\(text)")
        }
        return DBusMessage(adopting: reply)
    }

    /// Starts keeping the signals `interface.member` sent on `path` (any path when nil), for
    /// `waitForSignal` and `takeSignals`. The match is in place when this returns.
    func subscribe(path: String?, interface: String, member: String?) throws(SwiftRecordError) {
        var slot: OpaquePointer?
        let handler: sd_bus_message_handler_t = { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let inbox = Unmanaged<SignalInbox>.fromOpaque(userdata).takeUnretainedValue()
            inbox.messages.append(DBusMessage(adopting: sd_bus_message_ref(message)))
            return 0
        }
        try DBusConnection.check(sd_bus_match_signal(bus, &slot, nil, path, interface, member, handler,
                                                     Unmanaged.passUnretained(inbox).toOpaque()),
                                 "subscribing to \(interface).\(member ?? "*")")
        if let slot { slots.append(slot) }
    }

    /// Reads what the bus has for us without waiting, then hands over the signals kept so far.
    func takeSignals() throws(SwiftRecordError) -> [DBusMessage] {
        try dispatch()
        defer { inbox.messages.removeAll() }
        return inbox.messages
    }

    /// Waits until a kept signal satisfies `body` (which returns its value), or the monotonic
    /// clock reaches `deadline` (nanoseconds): nil then. Signals `body` rejects are dropped.
    func waitForSignal<R>(untilNanoseconds deadline: Int64, stoppedBy stop: WakeUp? = nil,
                          _ body: (DBusMessage) throws(SwiftRecordError) -> R?) throws(SwiftRecordError) -> R? {
        while true {
            try dispatch()
            while !inbox.messages.isEmpty {
                let message = inbox.messages.removeFirst()
                if let result = try body(message) { return result }
            }
            if let stop, stop.isInterrupted {
                throw SwiftRecordError(.cancelled, operation: "dbus", message: "stopped while waiting")
            }
            var left = deadline - MonotonicClock.nanoseconds()
            if left <= 0 { return nil }
            // With a stop to watch, in slices of 100 ms: a stop ends the wait within that.
            if stop != nil { left = min(left, 100_000_000) }
            let r = sd_bus_wait(bus, UInt64(left / 1000 + 1))
            if r < 0 && r != -EINTR {
                throw SwiftRecordError(.io, operation: "dbus", message: "the D-Bus session bus went away: \(DBusConnection.describe(r))")
            }
        }
    }

    /// Processes every message waiting on the connection (matched signals go to the inbox).
    private func dispatch() throws(SwiftRecordError) {
        while true {
            let r = sd_bus_process(bus, nil)
            if r == 0 { return }
            if r < 0 {
                throw SwiftRecordError(.io, operation: "dbus", message: "the D-Bus session bus went away: \(DBusConnection.describe(r))")
            }
        }
    }

    private func append(_ argument: Argument, to m: OpaquePointer) throws(SwiftRecordError) {
        switch argument {
        case .string(let s): try appendBasic(m, "s", s)
        case .objectPath(let s): try appendBasic(m, "o", s)
        case .uint32(var v): try DBusConnection.check(sd_bus_message_append_basic(m, DBusConnection.code("u"), &v), "writing a D-Bus value")
        case .options(let options):
            try DBusConnection.check(sd_bus_message_open_container(m, DBusConnection.code("a"), "{sv}"), "writing D-Bus options")
            for (key, value) in options.sorted(by: { $0.key < $1.key }) {
                try DBusConnection.check(sd_bus_message_open_container(m, DBusConnection.code("e"), "sv"), "writing D-Bus options")
                try appendBasic(m, "s", key)
                try appendVariant(value, to: m)
                try DBusConnection.check(sd_bus_message_close_container(m), "writing D-Bus options")
            }
            try DBusConnection.check(sd_bus_message_close_container(m), "writing D-Bus options")
        }
    }

    private func appendVariant(_ value: DBusValue, to m: OpaquePointer) throws(SwiftRecordError) {
        func open(_ signature: String) throws(SwiftRecordError) {
            try DBusConnection.check(sd_bus_message_open_container(m, DBusConnection.code("v"), signature), "writing a D-Bus variant")
        }
        switch value {
        case .uint32(var v): try open("u"); try DBusConnection.check(sd_bus_message_append_basic(m, DBusConnection.code("u"), &v), "writing a D-Bus value")
        case .bool(let b): try open("b"); var v: Int32 = b ? 1 : 0; try DBusConnection.check(sd_bus_message_append_basic(m, DBusConnection.code("b"), &v), "writing a D-Bus value")
        case .string(let s): try open("s"); try appendBasic(m, "s", s)
        case .objectPath(let s): try open("o"); try appendBasic(m, "o", s)
        default:
            throw SwiftRecordError(.invalidArgument, operation: "dbus", message: "cannot send the option value \(value)")
        }
        try DBusConnection.check(sd_bus_message_close_container(m), "writing a D-Bus variant")
    }

    private func appendBasic(_ m: OpaquePointer, _ type: Unicode.Scalar, _ text: String) throws(SwiftRecordError) {
        try DBusConnection.check(text.withCString { sd_bus_message_append_basic(m, DBusConnection.code(type), $0) }, "writing a D-Bus string")
    }

    private static func code(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }
}
