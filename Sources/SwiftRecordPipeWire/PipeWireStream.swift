internal import CPipeWire
import Foundation
import SwiftRecord

/// One PipeWire video stream from a node (a screen cast, a camera, any picture producer): the
/// one owner of its thread loop, context, core connection and `pw_stream`.
///
/// PipeWire objects are touched only with the thread loop's lock held (or before its thread
/// starts and after it stops); the callbacks run with it held. Lock order: PipeWire's loop
/// lock, then `StreamFrames.state`, which the callbacks hold only to swap buffer references:
/// the sources copy and decode with it released (`StreamFrames.State.borrowHeld`).
package final class PipeWireStream {
    private let loop: OpaquePointer
    private let context: OpaquePointer
    private let core: OpaquePointer
    private let stream: OpaquePointer
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let hook: UnsafeMutablePointer<spa_hook>
    /// The registry, watched for the node's removal: a producer that dies (the compositor
    /// killed) leaves a stream that only pauses, which would record a frozen picture.
    private var registry: OpaquePointer?
    private let registryEvents: UnsafeMutablePointer<pw_registry_events>
    private let registryHook: UnsafeMutablePointer<spa_hook>
    /// Signalled when a buffer a source was reading waits to be given back.
    private var returnEvent: UnsafeMutablePointer<spa_source>?
    package let frames: StreamFrames
    private let callbacks: StreamCallbacks
    private let offer: StreamOffer
    private var running = true
    private var disconnected = false

    /// Opens libpipewire (`PipeWireLibrary`) and calls `pw_init`, once per process.
    package static func initialise() throws(SwiftRecordError) {
        try PipeWireLibrary.load()
        _ = initialised
    }

    private static let initialised: Bool = {
        pw_init(nil, nil)
        return true
    }()

    /// Connects to PipeWire (its default socket, or `remote`, a descriptor the portal
    /// handed out, which the stream then owns) and starts reading node `node`; with
    /// `cursorMetadata` its buffers carry the cursor (`SPA_META_Cursor`).
    package init(node: UInt32, remote: Int32? = nil, cursorMetadata: Bool = false, offer: StreamOffer = .screen) throws(SwiftRecordError) {
        do throws(SwiftRecordError) {
            try PipeWireStream.initialise()
        } catch {
            if let remote { close(remote) }
            throw error
        }
        guard let loop = pw_thread_loop_new("swift-record.pipewire", nil) else {
            if let remote { close(remote) }
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot make a PipeWire thread loop")
        }
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            pw_thread_loop_destroy(loop)
            if let remote { close(remote) }
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot make a PipeWire context")
        }
        let core = remote.map { pw_context_connect_fd(context, $0, nil, 0) } ?? pw_context_connect(context, nil, 0)
        guard let core else {
            let reason = String(cString: strerror(errno))
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
            throw SwiftRecordError(.io, operation: "pipewire",
                                   message: "cannot connect to PipeWire (\(reason)); screen casting on Wayland needs the PipeWire service running in the session")
        }
        let role = switch offer { case .screen: " media.role=Screen"; case .camera: " media.role=Camera"; case .producer: "" }
        let properties = pw_properties_new_string("media.type=Video media.category=Capture" + role)
        guard let stream = pw_stream_new(core, "swift-record", properties) else {
            pw_core_disconnect(core)
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot make a PipeWire stream")
        }
        self.loop = loop
        self.context = context
        self.core = core
        self.stream = stream
        self.offer = offer
        frames = StreamFrames()
        callbacks = StreamCallbacks(stream: stream, frames: frames, cursorMetadata: cursorMetadata, node: node)
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, state, error in
            guard let data else { return }
            PipeWireStream.callbacks(data).frames.stateChanged(state, error: error.map { String(cString: $0) })
        }
        events.pointee.param_changed = { data, id, param in
            guard let data, id == SPA_PARAM_Format.rawValue else { return }
            PipeWireStream.callbacks(data).formatChanged(param)
        }
        events.pointee.remove_buffer = { data, buffer in
            guard let data, let buffer else { return }
            PipeWireStream.callbacks(data).frames.remove(buffer)
        }
        events.pointee.process = { data in
            guard let data else { return }
            PipeWireStream.callbacks(data).process()
        }
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(callbacks).toOpaque())
        registryEvents = .allocate(capacity: 1)
        registryEvents.initialize(to: pw_registry_events())
        registryEvents.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        registryEvents.pointee.global_remove = { data, id in
            guard let data else { return }
            PipeWireStream.callbacks(data).globalRemoved(id)
        }
        registryHook = .allocate(capacity: 1)
        registryHook.initialize(to: spa_hook())
        returnEvent = sr_pw_loop_add_event(pw_thread_loop_get_loop(loop), { data, _ in
            guard let data else { return }
            PipeWireStream.callbacks(data).giveBackReturned()
        }, Unmanaged.passUnretained(callbacks).toOpaque())
        if let returnEvent, let pwLoop = pw_thread_loop_get_loop(loop) {
            frames.state.withLock { $0.signal = LoopSignal(loop: pwLoop, source: returnEvent) }
        }
        registry = sr_pw_core_get_registry(core)
        if let registry {
            _ = sr_pw_registry_add_listener(registry, registryHook, registryEvents, Unmanaged.passUnretained(callbacks).toOpaque())
        }

        let r = connect()
        guard r >= 0, pw_thread_loop_start(loop) >= 0 else {
            running = false
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot connect a PipeWire stream to node \(node): \(String(cString: strerror(r < 0 ? -r : EIO)))")
        }
    }

    /// Connects the stream to the node with the formats of `offer`; PipeWire's result.
    private func connect() -> Int32 {
        var storage = [UInt8](repeating: 0, count: 1024)
        return storage.withUnsafeMutableBufferPointer { bytes in
            var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 2)
            let count: UInt32
            switch offer {
            case .screen:
                params[0] = sr_pw_video_formats(bytes.baseAddress, UInt32(bytes.count))
                count = params[0] == nil ? 0 : 1
            case .camera(let width, let height, let fps), .producer(let width, let height, let fps):
                // A producer may send what a renderer draws (4-byte RGB); a camera does not.
                let rgb: Int32 = if case .producer = offer { 1 } else { 0 }
                count = sr_pw_camera_formats(bytes.baseAddress, UInt32(bytes.count), &params, UInt32(width), UInt32(height), UInt32(fps), rgb)
            }
            guard count > 0 else { return -ENOSPC }
            let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
            return pw_stream_connect(stream, SPA_DIRECTION_INPUT, callbacks.node, flags, &params, count)
        }
    }

    /// Disconnects from the node and connects to it again, every buffer given back first, as
    /// a new reader: a producer that sends a picture only when something changes, and whose
    /// first picture for this reader was lost, sends one to a new reader (headless Mutter, a
    /// new cast of a still screen on a busy machine, sent none). A failure to connect again
    /// ends the stream (`StreamFrames.State.failure`).
    package func reconnect() {
        guard running else { return }
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        let idle = frames.state.wait { s -> Bool? in
            if s.borrowed != nil { return nil }
            guard !s.stopping else { return false }
            giveBackAll(&s)
            s.reconnecting = true
            return true
        }
        guard idle == true else { return }
        // Its state changes (paused, unconnected) come now, on this thread, and are no end.
        pw_stream_disconnect(stream)
        frames.state.withLock { s in (s.reconnecting, s.streamed, s.pausedAfterStreaming, s.streamingSince) = (false, false, false, nil) }
        let r = connect()
        if r < 0 {
            frames.state.withLockNotifying { s in
                if s.failure == nil { s.failure = "cannot connect the PipeWire stream to node \(callbacks.node) again: \(String(cString: strerror(-r)))" }
            }
        }
    }

    /// Gives every buffer held or waiting in `s` back to PipeWire (with the loop's lock held,
    /// no source reading one).
    private func giveBackAll(_ s: inout StreamFrames.State) {
        if let held = s.held { pw_stream_queue_buffer(stream, held.pointer) }
        for buffer in s.returning { pw_stream_queue_buffer(stream, buffer.pointer) }
        (s.held, s.heldIsNew) = (nil, false)
        s.returning.removeAll()
    }

    deinit {
        stop()
        pw_stream_destroy(stream)
        if let registry {
            spa_hook_remove(registryHook)
            pw_proxy_destroy(registry)
        }
        pw_core_disconnect(core)
        if let returnEvent { sr_pw_loop_destroy_source(pw_thread_loop_get_loop(loop), returnEvent) }
        pw_context_destroy(context)
        pw_thread_loop_destroy(loop)
        events.deinitialize(count: 1)
        events.deallocate()
        hook.deallocate()
        registryEvents.deinitialize(count: 1)
        registryEvents.deallocate()
        registryHook.deallocate()
    }

    /// Gives the held buffer back and disconnects, with the loop still running (so both reach
    /// the producer), then stops the stream's thread (no callback runs after this); the
    /// objects go in `deinit`. Safe to call more than once.
    ///
    /// A buffer kept at the disconnect is never seen again by a producer that keeps its
    /// buffers from one consumer to the next (the tests' camera, a `pw_stream` driver):
    /// the camera lost one per recording until, with all of them gone, it sent nothing to anyone.
    package func stop() {
        if running { pw_thread_loop_lock(loop) }
        // Every buffer back, the one a source reads once it is done (a copy or a decode).
        _ = frames.state.wait { s -> Bool? in
            s.stopping = true
            if s.borrowed != nil { return nil }
            giveBackAll(&s)
            s.signal = nil
            return true
        }
        if !disconnected {
            disconnected = true
            pw_stream_disconnect(stream)
        }
        guard running else { return }
        pw_thread_loop_unlock(loop)
        running = false
        pw_thread_loop_stop(loop)
    }

    private static func callbacks(_ data: UnsafeMutableRawPointer) -> StreamCallbacks {
        Unmanaged<StreamCallbacks>.fromOpaque(data).takeUnretainedValue()
    }
}

/// What the stream's C callbacks reach through their user data; used on PipeWire's thread
/// only (the stream object is PipeWire's to touch there), the shared part in `frames`.
private final class StreamCallbacks {
    let stream: OpaquePointer
    let frames: StreamFrames
    let cursorMetadata: Bool
    /// Room for one buffer's damaged rectangles.
    let regions = UnsafeMutablePointer<spa_region>.allocate(capacity: StreamFrames.State.maximumDamage)

    /// The node the stream reads.
    let node: UInt32

    init(stream: OpaquePointer, frames: StreamFrames, cursorMetadata: Bool, node: UInt32) {
        self.stream = stream
        self.frames = frames
        self.cursorMetadata = cursorMetadata
        self.node = node
        frames.state.withLock { $0.damage.reserveCapacity(StreamFrames.State.maximumDamage) }
    }

    deinit { regions.deallocate() }

    /// A global left the registry: when it is the node read, its producer is gone.
    func globalRemoved(_ id: UInt32) {
        guard id == node else { return }
        frames.state.withLockNotifying { s in
            if !s.stopping && s.failure == nil {
                s.failure = "PipeWire node \(node), which the stream read, went away: the compositor, camera or program that made it closed it or is gone"
            }
        }
    }

    /// A new format: its size and layout, and what the stream wants of the buffers
    /// (shared memory only; crop, damage and, when asked for, cursor metadata). Called on PipeWire's thread.
    fileprivate func formatChanged(_ param: UnsafePointer<spa_pod>?) {
        var info = sr_video_format()
        guard sr_pw_parse_any_video_format(param, &info) == 0 else { return }
        guard let pixelFormat = info.mjpeg != 0 ? .mjpg : StreamPixelFormat(spa_video_format(info.format)) else {
            frames.state.withLockNotifying { $0.failure = "the stream's producer chose a pixel format swift-record cannot read (SPA video format \(info.format))" }
            return
        }
        let rate = Rational(Int32(clamping: info.rate_num), Int32(clamping: info.rate_den))
        let format = StreamFormat(width: Int(info.width), height: Int(info.height), pixelFormat: pixelFormat, frameRate: rate)
        frames.state.withLockNotifying { s in
            s.format = format
            s.damageIsWhole = true
        }
        var storage = [UInt8](repeating: 0, count: 1024)
        storage.withUnsafeMutableBufferPointer { bytes in
            var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 5)
            let count = sr_pw_buffer_params(bytes.baseAddress, UInt32(bytes.count), &params, cursorMetadata ? 1 : 0)
            _ = pw_stream_update_params(stream, &params, count)
        }
    }

}

extension StreamCallbacks {
    /// Keeps the newest picture and gives every older one back at once, gathering what
    /// changed in each (its damage metadata) since a picture was last copied out.
    func process() {
        while let b = pw_stream_dequeue_buffer(stream) {
            // Every buffer's cursor news, in order (a superseded one may bring a new shape;
            // one may bring the cursor alone, with no picture).
            if cursorMetadata, let spa = b.pointee.buffer, let update = StreamCursor.update(in: spa) {
                frames.state.withLockNotifying { s in
                    var cursor = s.cursor ?? StreamCursor()
                    if cursor.apply(update) || s.cursor == nil { s.cursorIsNew = true }
                    s.cursor = cursor
                }
            }
            guard let buffer = b.pointee.buffer, buffer.pointee.n_datas >= 1,
                  let data = buffer.pointee.datas, data.pointee.data != nil, let chunk = data.pointee.chunk,
                  chunk.pointee.size > 0, chunk.pointee.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0 else {
                // No picture (a cursor-only buffer): the held one stays.
                pw_stream_queue_buffer(stream, b)
                continue
            }
            let count = Int(sr_pw_damage(buffer, regions, Int32(StreamFrames.State.maximumDamage)))
            // Only references swap here: a source copies or decodes with this lock released.
            let old = frames.state.withLockNotifying { s -> HeldBuffer? in
                if count >= 0 { s.withDamage += 1 }
                s.gather(damage: count < 0 || count > StreamFrames.State.maximumDamage ? nil : UnsafeBufferPointer(start: regions, count: count))
                return s.arrive(HeldBuffer(pointer: b))
            }
            if let old { pw_stream_queue_buffer(stream, old.pointer) }
        }
        giveBackReturned()
    }

    /// Gives back the buffers sources finished reading after newer ones superseded them.
    /// On PipeWire's thread (the process callback, or the event `endBorrow` signals).
    func giveBackReturned() {
        frames.state.withLockNotifying { s in
            for buffer in s.returning { pw_stream_queue_buffer(stream, buffer.pointer) }
            s.returning.removeAll(keepingCapacity: true)
        }
    }

}
