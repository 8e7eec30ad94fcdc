internal import CPipeWire
import Foundation
import SwiftRecord

/// A PipeWire node as the registry announces it: what `--list-cameras` shows and what a
/// camera name is matched against.
public struct PipeWireNode: Sendable, Equatable {
    /// The node's id in this PipeWire session (what a stream connects to).
    public let id: UInt32
    /// `object.serial`: stable while the node exists, never reused.
    public let serial: String?
    /// `node.name` (`v4l2_input.pci-0000_00_14.0-usb-0_1_1.0`, `video-src`).
    public let name: String?
    /// `node.description` or `node.nick`: what a desktop shows.
    public let description: String?
    /// `media.class` (`Video/Source`).
    public let mediaClass: String?

    /// True when `text` names this node: its id, serial, name or description.
    public func matches(_ text: String) -> Bool {
        [String(id), serial, name, description].contains { $0 == text }
    }
}

/// One look at the PipeWire registry: connects, collects every node's global up to the
/// server's answer to a sync, and disconnects. The one owner of its loop, context, core and
/// registry proxy while it runs.
package enum PipeWireRegistry {
    /// What the callbacks collect; touched on PipeWire's loop thread and read after it stopped.
    private final class Collected: @unchecked Sendable {
        // `@unchecked`: written only by the loop's callbacks (with the loop's lock held),
        // read by `nodes` after `pw_thread_loop_stop`, which orders the two.
        var nodes: [PipeWireNode] = []
        var done = false
        var failure: String?
        var seq: Int32 = 0
    }

    /// The nodes of the session's PipeWire (its default socket) whose `media.class` is
    /// `mediaClass` (every node when nil), in the registry's order.
    package static func nodes(mediaClass: String?, timeout: Duration = .seconds(5)) throws(SwiftRecordError) -> [PipeWireNode] {
        try PipeWireStream.initialise()
        guard let loop = pw_thread_loop_new("swift-record.registry", nil) else {
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot make a PipeWire thread loop")
        }
        defer { pw_thread_loop_destroy(loop) }
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot make a PipeWire context")
        }
        defer { pw_context_destroy(context) }
        let collected = Collected()
        let data = Unmanaged.passUnretained(collected).toOpaque()
        var registryEvents = pw_registry_events()
        registryEvents.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        registryEvents.global = { data, id, _, type, _, props in
            guard let data, let type, String(cString: type) == "PipeWire:Interface:Node" else { return }
            let c = Unmanaged<Collected>.fromOpaque(data).takeUnretainedValue()
            func value(_ key: String) -> String? {
                guard let props, let v = spa_dict_lookup(props, key) else { return nil }
                return String(cString: v)
            }
            c.nodes.append(PipeWireNode(id: id, serial: value("object.serial"), name: value("node.name"),
                                        description: value("node.description") ?? value("node.nick"), mediaClass: value("media.class")))
        }
        var coreEvents = pw_core_events()
        coreEvents.version = UInt32(PW_VERSION_CORE_EVENTS)
        coreEvents.done = { data, id, seq in
            guard let data else { return }
            let c = Unmanaged<Collected>.fromOpaque(data).takeUnretainedValue()
            if id == PW_ID_CORE && seq == c.seq { c.done = true }
        }
        coreEvents.error = { data, id, _, res, message in
            guard let data, id == PW_ID_CORE else { return }
            let c = Unmanaged<Collected>.fromOpaque(data).takeUnretainedValue()
            c.failure = message.map { String(cString: $0) } ?? String(cString: strerror(-res))
        }
        var registryHook = spa_hook(), coreHook = spa_hook()
        pw_thread_loop_lock(loop)
        guard let core = pw_context_connect(context, nil, 0) else {
            pw_thread_loop_unlock(loop)
            throw SwiftRecordError(.io, operation: "pipewire",
                                   message: "cannot connect to PipeWire (\(String(cString: strerror(errno)))): cameras are found through the PipeWire service of the session")
        }
        guard let registry = sr_pw_core_get_registry(core) else {
            pw_core_disconnect(core)
            pw_thread_loop_unlock(loop)
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot read PipeWire's registry")
        }
        _ = sr_pw_registry_add_listener(registry, &registryHook, &registryEvents, data)
        _ = sr_pw_core_add_listener(core, &coreHook, &coreEvents, data)
        collected.seq = sr_pw_core_sync(core, 0)
        pw_thread_loop_unlock(loop)
        guard pw_thread_loop_start(loop) >= 0 else {
            pw_proxy_destroy(registry)
            pw_core_disconnect(core)
            throw SwiftRecordError(.io, operation: "pipewire", message: "cannot start a PipeWire thread loop")
        }
        let deadline = MonotonicClock.deadline(after: timeout)
        var finished = false
        while MonotonicClock.nanoseconds() < deadline {
            pw_thread_loop_lock(loop)
            finished = collected.done || collected.failure != nil
            pw_thread_loop_unlock(loop)
            if finished { break }
            usleep(5_000)
        }
        pw_thread_loop_stop(loop)
        spa_hook_remove(&registryHook)
        spa_hook_remove(&coreHook)
        pw_proxy_destroy(registry)
        pw_core_disconnect(core)
        if let failure = collected.failure {
            throw SwiftRecordError(.io, operation: "pipewire", message: "PipeWire refused to list its nodes: \(failure)")
        }
        guard finished else {
            throw SwiftRecordError(.io, operation: "pipewire", message: "PipeWire did not list its nodes within \(timeout.components.seconds) s")
        }
        return collected.nodes.filter { mediaClass == nil || $0.mediaClass == mediaClass }
    }
}
