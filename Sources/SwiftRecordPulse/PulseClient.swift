internal import CPulse
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a PulseAudio server: the one owner of a `pa_threaded_mainloop` and the
/// `pa_context` on it.
///
/// libpulse runs the mainloop on a thread of its own and calls every callback there with
/// the mainloop lock held. Our side keeps to three rules:
/// - libpulse objects are touched only inside `withMainloop` (which holds the mainloop
///   lock) or from callbacks (which run holding it);
/// - callbacks never block: they record what happened in a `Locked` and notify;
/// - callers wait on that `Locked` with a deadline (`Locked.wait(untilNanoseconds:)`), never
///   in `pa_threaded_mainloop_wait`, so every wait can time out.
///
/// Lock order: `lifecycle` → the mainloop lock → the `Locked` states callbacks write.
final class PulseClient: @unchecked Sendable {
    // @unchecked: `mainloop` and `context` are created in init and freed once in `close()`;
    // between the two they are used only inside `withMainloop`, which holds `lifecycle` (so
    // `close()` cannot free them meanwhile) and the mainloop lock (libpulse's rule).
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    /// True once `close()` has freed the objects.
    private let lifecycle = Locked(false)
    /// What the context's state callback has seen.
    let status = Locked(Status())

    struct Status {
        var state = PA_CONTEXT_UNCONNECTED
        /// `pa_context_errno` when the context failed.
        var errorCode: Int32 = 0
    }

    /// The server as asked for or as found: for error messages.
    let serverDescription: String

    /// Connects to `server` (`unix:/path`, `tcp:host`; nil: `$PULSE_SERVER`, then the
    /// per-user socket) and waits up to `timeout` seconds for the connection. Never starts
    /// a server (no autospawn). Throws naming the server when none answers.
    init(server: String?, timeout: Double, applicationName: String = "swift-record") throws(SwiftRecordError) {
        serverDescription = PulseClient.describe(server: server)
        try PulseLibrary.load()
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw SwiftRecordError(.io, operation: "pa_threaded_mainloop_new", message: "libpulse could not create its mainloop")
        }
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), applicationName) else {
            pa_threaded_mainloop_free(mainloop)
            throw SwiftRecordError(.io, operation: "pa_context_new", message: "libpulse could not create a context")
        }
        self.mainloop = mainloop
        self.context = context
        // The thread is not running yet: no lock is needed for these first calls.
        pa_context_set_state_callback(context, PulseClient.contextStateChanged, Unmanaged.passUnretained(status).toOpaque())
        let connected = pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil)
        if connected < 0 {
            let code = pa_context_errno(context)
            close()
            throw PulseClient.unreachable(serverDescription, code: code)
        }
        pa_threaded_mainloop_set_name(mainloop, "pulse-mainloop")
        guard pa_threaded_mainloop_start(mainloop) >= 0 else {
            close()
            throw SwiftRecordError(.io, operation: "pa_threaded_mainloop_start", message: "libpulse could not start its mainloop thread")
        }
        let deadline = MonotonicClock.nanoseconds() + Int64(timeout * 1e9)
        let outcome = status.wait(untilNanoseconds: deadline) { s -> Status? in
            s.state == PA_CONTEXT_READY || s.state == PA_CONTEXT_FAILED || s.state == PA_CONTEXT_TERMINATED ? s : nil
        } ?? status.withLock { $0 }
        guard outcome.state == PA_CONTEXT_READY else {
            close()
            if outcome.state == PA_CONTEXT_FAILED || outcome.state == PA_CONTEXT_TERMINATED {
                throw PulseClient.unreachable(serverDescription, code: outcome.errorCode)
            }
            throw SwiftRecordError(.io, operation: "pulse",
                                   message: "no PulseAudio server answered at \(serverDescription) within \(timeout) s; start one or use --audio none")
        }
    }

    deinit { close() }

    /// True while the connection is up.
    var isConnected: Bool { status.withLock { $0.state == PA_CONTEXT_READY } }

    /// Runs `body` with the context, the mainloop lock held. Throws when the client is closed.
    func withMainloop<R>(_ body: (OpaquePointer) throws(SwiftRecordError) -> R) throws(SwiftRecordError) -> R {
        try lifecycle.withLock { (closed: inout Bool) throws(SwiftRecordError) -> R in
            guard !closed else {
                throw SwiftRecordError(.invalidState, operation: "pulse", message: "the PulseAudio connection is closed")
            }
            pa_threaded_mainloop_lock(mainloop)
            defer { pa_threaded_mainloop_unlock(mainloop) }
            return try body(context)
        }
    }

    /// Disconnects, stops the mainloop thread and frees both objects; later calls do nothing.
    /// Streams made on this context must be released first. Never call from a callback.
    func close() {
        lifecycle.withLock { (closed: inout Bool) in
            guard !closed else { return }
            closed = true
            pa_threaded_mainloop_lock(mainloop)
            pa_context_set_state_callback(context, nil, nil)
            pa_context_disconnect(context)
            pa_threaded_mainloop_unlock(mainloop)
            pa_threaded_mainloop_stop(mainloop)
            pa_context_unref(context)
            pa_threaded_mainloop_free(mainloop)
        }
        status.withLockNotifying { if $0.state != PA_CONTEXT_FAILED { $0.state = PA_CONTEXT_TERMINATED } }
    }

    private static let contextStateChanged: pa_context_notify_cb_t = { context, userdata in
        guard let context, let userdata else { return }
        let state = pa_context_get_state(context)
        let code = pa_context_errno(context)
        Unmanaged<Locked<Status>>.fromOpaque(userdata)._withUnsafeGuaranteedRef { status in
            status.withLockNotifying {
                $0.state = state
                if state == PA_CONTEXT_FAILED { $0.errorCode = code }
            }
        }
    }

    // MARK: Queries

    /// The default sink and source, and the server's name.
    struct ServerFacts: Sendable {
        var defaultSink: String?
        var defaultSource: String?
        var serverString: String
    }

    /// A source as the server lists it.
    struct SourceFacts: Sendable {
        var name: String
        var description: String
        /// The sink this source monitors; nil for a capture device.
        var monitorOf: String?
        var sampleRate: Int
        var channels: Int
    }

    /// A program's playback stream (a sink input) as the server lists it.
    struct SinkInputFacts: Sendable {
        var index: UInt32
        /// The sink it plays into.
        var sink: UInt32
        var application: String?
        var processID: String?
        var binary: String?
        var mediaName: String?

        /// Whether `target` names this program: its application name or binary (either
        /// case), or its process id.
        func matches(_ target: String) -> Bool {
            if let processID, processID == target { return true }
            return [application, binary].contains { $0?.caseInsensitiveCompare(target) == .orderedSame }
        }
    }

    /// A reply libpulse fills in from its thread; the caller waits for `done`.
    final class Reply: Sendable {
        struct State {
            var done = false
            var failed = false
            var server: ServerFacts?
            var sources: [SourceFacts] = []
            var monitorSource: String?
            var sinkInputs: [SinkInputFacts] = []
        }
        let state = Locked(State())
        static func from(_ userdata: UnsafeMutableRawPointer?, _ body: (inout State) -> Void) {
            guard let userdata else { return }
            Unmanaged<Reply>.fromOpaque(userdata)._withUnsafeGuaranteedRef { reply in
                reply.state.withLockNotifying { body(&$0) }
            }
        }
    }

    /// Starts an operation with `start` (given the context and the reply's pointer), waits
    /// until its callback says it is done (or the operation is cancelled: the context
    /// failed) or `timeout` passes, and returns what the callback recorded.
    func query(_ what: String, timeout: Double = 5,
               _ start: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) throws(SwiftRecordError) -> Reply.State {
        let reply = Reply()
        let userdata = Unmanaged.passUnretained(reply).toOpaque()
        let started = try withMainloop { (context) throws(SwiftRecordError) -> OpaquePointer in
            guard let operation = start(context, userdata) else {
                throw SwiftRecordError(.io, operation: what,
                                       message: "PulseAudio at \(serverDescription) refused the request: \(PulseClient.text(pa_context_errno(context)))")
            }
            pa_operation_set_state_callback(operation, { operation, userdata in
                guard let operation, pa_operation_get_state(operation) == PA_OPERATION_CANCELLED else { return }
                Reply.from(userdata) { $0.done = true; $0.failed = true }
            }, userdata)
            return operation
        }
        let deadline = MonotonicClock.nanoseconds() + Int64(timeout * 1e9)
        let result = reply.state.wait(untilNanoseconds: deadline) { $0.done ? $0 : nil }
        // Cancelling under the lock guarantees no callback reaches `reply` after this.
        _ = try? withMainloop { _ in
            pa_operation_set_state_callback(started, nil, nil)
            if pa_operation_get_state(started) == PA_OPERATION_RUNNING { pa_operation_cancel(started) }
            pa_operation_unref(started)
        }
        guard let result else {
            throw SwiftRecordError(.io, operation: what, message: "PulseAudio at \(serverDescription) did not answer within \(timeout) s")
        }
        return result
    }

    /// The server's defaults.
    func serverInfo() throws(SwiftRecordError) -> ServerFacts {
        let result = try query("pa_context_get_server_info") { context, userdata in
            pa_context_get_server_info(context, { _, info, userdata in
                Reply.from(userdata) { state in
                    state.done = true
                    guard let info = info?.pointee else { state.failed = true; return }
                    state.server = ServerFacts(defaultSink: info.default_sink_name.map { String(cString: $0) },
                                               defaultSource: info.default_source_name.map { String(cString: $0) },
                                               serverString: info.server_name.map { String(cString: $0) } ?? "PulseAudio")
                }
            }, userdata)
        }
        guard let server = result.server else {
            throw SwiftRecordError(.io, operation: "pa_context_get_server_info", message: "PulseAudio at \(serverDescription) did not describe itself")
        }
        return server
    }

    /// Every source, monitors included.
    func sources() throws(SwiftRecordError) -> [SourceFacts] {
        let result = try query("pa_context_get_source_info_list") { context, userdata in
            pa_context_get_source_info_list(context, PulseClient.sourceListed, userdata)
        }
        guard !result.failed else {
            throw SwiftRecordError(.io, operation: "pa_context_get_source_info_list", message: "PulseAudio at \(serverDescription) did not list its sources")
        }
        return result.sources
    }

    /// The source named `name` (special names like `@DEFAULT_MONITOR@` resolve to the real
    /// one), or nil when the server has none by that name.
    func source(named name: String) throws(SwiftRecordError) -> SourceFacts? {
        let result = try query("pa_context_get_source_info_by_name") { context, userdata in
            pa_context_get_source_info_by_name(context, name, PulseClient.sourceListed, userdata)
        }
        return result.sources.first
    }

    /// The monitor source of sink `name`, or nil when there is no such sink.
    func monitorSource(ofSink name: String) throws(SwiftRecordError) -> String? {
        let result = try query("pa_context_get_sink_info_by_name") { context, userdata in
            pa_context_get_sink_info_by_name(context, name, PulseClient.sinkMonitorListed, userdata)
        }
        return result.monitorSource
    }

    /// The programs playing now: every sink input.
    func sinkInputs() throws(SwiftRecordError) -> [SinkInputFacts] {
        let result = try query("pa_context_get_sink_input_info_list") { context, userdata in
            pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
                Reply.from(userdata) { state in
                    if eol != 0 { state.done = true; state.failed = state.failed || eol < 0; return }
                    guard let info = info?.pointee else { return }
                    let property = { (key: String) in pa_proplist_gets(info.proplist, key).map { String(cString: $0) } }
                    state.sinkInputs.append(SinkInputFacts(index: info.index, sink: info.sink,
                                                           application: property("application.name"),
                                                           processID: property("application.process.id"),
                                                           binary: property("application.process.binary"),
                                                           mediaName: info.name.map { String(cString: $0) }))
                }
            }, userdata)
        }
        guard !result.failed else {
            throw SwiftRecordError(.io, operation: "pa_context_get_sink_input_info_list", message: "PulseAudio at \(serverDescription) did not list what is playing")
        }
        return result.sinkInputs
    }

    /// The monitor source of the sink with index `index`, or nil when there is no such sink.
    func monitorSource(ofSinkIndex index: UInt32) throws(SwiftRecordError) -> String? {
        let result = try query("pa_context_get_sink_info_by_index") { context, userdata in
            pa_context_get_sink_info_by_index(context, index, PulseClient.sinkMonitorListed, userdata)
        }
        return result.monitorSource
    }

    /// A sink lookup's reply: its monitor source's name.
    private static let sinkMonitorListed: pa_sink_info_cb_t = { _, info, eol, userdata in
        Reply.from(userdata) { state in
            if eol != 0 { state.done = true; state.failed = state.failed || eol < 0; return }
            if let info = info?.pointee, let monitor = info.monitor_source_name {
                state.monitorSource = String(cString: monitor)
            }
        }
    }

    private static let sourceListed: pa_source_info_cb_t = { _, info, eol, userdata in
        Reply.from(userdata) { state in
            // eol < 0: an error, e.g. no source by that name (a lookup by name then has no entry).
            if eol != 0 { state.done = true; state.failed = state.failed || eol < 0; return }
            guard let info = info?.pointee, let name = info.name else { return }
            let monitorOf = info.monitor_of_sink == sr_pa_invalid_index() ? nil
                : info.monitor_of_sink_name.map { String(cString: $0) } ?? "#\(info.monitor_of_sink)"
            state.sources.append(SourceFacts(name: String(cString: name),
                                             description: info.description.map { String(cString: $0) } ?? "",
                                             monitorOf: monitorOf,
                                             sampleRate: Int(info.sample_spec.rate),
                                             channels: Int(info.sample_spec.channels)))
        }
    }

    // MARK: Words

    /// libpulse's text for an error code.
    static func text(_ code: Int32) -> String {
        pa_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    static func unreachable(_ server: String, code: Int32) -> SwiftRecordError {
        SwiftRecordError(.io, operation: "pulse",
                         message: "no PulseAudio server reachable at \(server) (\(text(code))); start one or use --audio none")
    }

    /// Where libpulse will look for the server, in words.
    static func describe(server: String?) -> String {
        if let server, !server.isEmpty { return server }
        let environment = ProcessInfo.processInfo.environment
        if let server = environment["PULSE_SERVER"], !server.isEmpty { return "\(server) ($PULSE_SERVER)" }
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        return "unix:\(runtime)/pulse/native (the per-user socket; set $PULSE_SERVER for another)"
    }
}
