internal import CX11
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// A protocol error the X server sent back for one of our requests.
struct X11ProtocolError: Sendable, Equatable {
    let code: UInt8
    let request: UInt8
    let minor: UInt8
    let resource: UInt
}

/// What Xlib's error callbacks report, per display connection.
///
/// Xlib's default handlers end the process: the protocol-error handler prints and calls
/// `exit(1)`, and after the I/O-error handler (the connection is gone) Xlib calls
/// `exit(1)` too. swift-record installs its own: protocol errors are recorded for the
/// connection that caused them and read back by the call that made the request; a lost
/// connection is recorded, and `XSetIOErrorExitHandler` (libX11 ≥ 1.7) replaces the exit,
/// so the failed call returns and the recording ends with an error and a finished file.
final class X11ErrorLog: Sendable {
    static let shared = X11ErrorLog()

    private struct State {
        var errors: [UInt: X11ProtocolError] = [:]
        /// Lost connections, with the thread that saw the loss (Xlib keeps the display locked for it).
        var lost: [UInt: pthread_t] = [:]
    }
    private let state = Locked(State())

    /// Installs the process-wide handlers once. Other Xlib users in the process keep working:
    /// their errors are recorded here instead of ending the process.
    static let installHandlers: Void = {
        _ = XSetErrorHandler(x11ProtocolErrorHandler)
        _ = XSetIOErrorHandler(x11IOErrorHandler)
    }()

    private static func key(_ display: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(display))) }

    func record(_ display: OpaquePointer, _ error: X11ProtocolError) {
        let key = Self.key(display)
        state.withLock { $0.errors[key] = error }
    }

    /// The last protocol error on `display` since the previous call, if any.
    func take(_ display: OpaquePointer) -> X11ProtocolError? {
        let key = Self.key(display)
        return state.withLock { $0.errors.removeValue(forKey: key) }
    }

    func markLost(_ display: OpaquePointer) {
        let key = Self.key(display), thread = pthread_self()
        state.withLock { s in
            if s.lost[key] == nil { s.lost[key] = thread }
        }
    }

    func isLost(_ display: OpaquePointer) -> Bool {
        lostOnThread(display) != nil
    }

    /// The thread that saw `display` go away, if it did.
    func lostOnThread(_ display: OpaquePointer) -> pthread_t? {
        let key = Self.key(display)
        return state.withLock { $0.lost[key] }
    }

    /// Forgets a closed connection (its address may be reused by the next one).
    func forget(_ display: OpaquePointer) {
        let key = Self.key(display)
        state.withLock { s in
            s.errors.removeValue(forKey: key)
            s.lost.removeValue(forKey: key)
        }
    }
}

private func x11ProtocolErrorHandler(_ display: OpaquePointer?, _ event: UnsafeMutablePointer<XErrorEvent>?) -> Int32 {
    guard let display, let event else { return 0 }
    let e = event.pointee
    X11ErrorLog.shared.record(display, X11ProtocolError(code: e.error_code, request: e.request_code, minor: e.minor_code, resource: e.resourceid))
    return 0
}

private func x11IOErrorHandler(_ display: OpaquePointer?) -> Int32 {
    if let display { X11ErrorLog.shared.markLost(display) }
    return 0
}

private func x11IOErrorExitHandler(_ display: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    // Returning (instead of exiting, Xlib's default) makes the failed call return failure.
    if let display { X11ErrorLog.shared.markLost(display) }
}

/// One connection to an X server: the only owner of its `Display*`, closed exactly once.
/// Not `Sendable`: Xlib connections serve one thread at a time, so a connection belongs
/// to one source (its grabber) and is used with that source's lock held.
final class X11Connection {
    /// libXext keeps, for each extension, a process-wide list of the displays that use it (and
    /// frees its generic-event extension's bookkeeping when the last display closes); Xlib's
    /// locks do not cover one thread adding a display to those lists (an extension's first
    /// use on it) while another removes one (closing it): valgrind saw
    /// the freed list written to, and glibc then aborted ("malloc_consolidate(): unaligned
    /// fastbin chunk") when a stream's grabs restarted. So every close, and every first use of
    /// an extension on a display, in this process goes through this one lock. Its state counts
    /// the calls it serialized (a lock holds a value, never an empty one: ThreadSanitizer sees
    /// the accesses to a zero-sized state as races).
    private static let extensionLock = Locked(0)

    /// Runs `body` (an extension's first use on a display) with no connection closing meanwhile.
    static func serialized<R>(_ body: () -> R) -> R {
        extensionLock.withLock { calls in
            calls &+= 1
            return body()
        }
    }

    /// The name as given (or `$DISPLAY`), for messages.
    let name: String
    private var handle: OpaquePointer?
    let screen: Int32
    let root: UInt
    let screenWidth: Int
    let screenHeight: Int

    init(name requested: String?) throws(SwiftRecordError) {
        _ = X11ErrorLog.installHandlers
        let env = ProcessInfo.processInfo.environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        guard let name = requested.flatMap({ $0.isEmpty ? nil : $0 }) ?? env else {
            throw SwiftRecordError(.invalidArgument, operation: "x11",
                                   message: "no X display to record: DISPLAY is not set; pass --display :N (or record the test scene with --source synthetic)")
        }
        self.name = name
        // Not under the lock: XOpenDisplay is libX11's alone (no libXext list), and it waits
        // for a server that does not answer, which must not hold up other connections.
        guard let display = XOpenDisplay(name) else {
            throw SwiftRecordError(.io, operation: "XOpenDisplay",
                                   message: "cannot open X display '\(name)': no X server answers there, or this user may not connect to it")
        }
        XSetIOErrorExitHandler(display, x11IOErrorExitHandler, nil)
        handle = display
        screen = XDefaultScreen(display)
        root = XRootWindow(display, screen)
        screenWidth = Int(XDisplayWidth(display, screen))
        screenHeight = Int(XDisplayHeight(display, screen))
    }

    deinit { close() }

    /// The open display, or nil once closed.
    var display: OpaquePointer? { handle }

    /// True once the server went away (the I/O error handler ran).
    var isLost: Bool {
        guard let handle else { return true }
        return X11ErrorLog.shared.isLost(handle)
    }

    /// The protocol error recorded since the last call, if any.
    func takeError() -> X11ProtocolError? {
        handle.flatMap { X11ErrorLog.shared.take($0) }
    }

    /// Waits until the server has handled every request so far (a round trip), so their
    /// errors are recorded. False if the connection is gone.
    @discardableResult
    func sync() -> Bool {
        guard let handle, !isLost else { return false }
        XSync(handle, 0)
        return !isLost
    }

    /// Xlib's text for a protocol error code.
    func describe(_ error: X11ProtocolError) -> String {
        var text = "error \(error.code)"
        if let handle, !isLost {
            var buffer = [CChar](repeating: 0, count: 128)
            XGetErrorText(handle, Int32(error.code), &buffer, Int32(buffer.count))
            let s = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !s.isEmpty { text = s }
        }
        return "\(text) (request \(error.request).\(error.minor))"
    }

    /// The error to throw once the server has gone away.
    var lostError: SwiftRecordError {
        SwiftRecordError(.io, operation: "x11", message: "lost the connection to X display '\(name)' (the X server went away)")
    }

    /// Closes the connection. Safe to call more than once; after it `display` is nil.
    ///
    /// After the server went away, Xlib leaves the display locked for the thread that saw
    /// it go (it expects the process to exit): that thread closes it; any other thread
    /// would wait forever, so from another thread the dead connection is abandoned instead.
    func close() {
        guard let h = handle else { return }
        handle = nil
        if let thread = X11ErrorLog.shared.lostOnThread(h), pthread_equal(thread, pthread_self()) == 0 {
            return
        }
        X11Connection.serialized { _ = XCloseDisplay(h) }
        X11ErrorLog.shared.forget(h)
    }
}
