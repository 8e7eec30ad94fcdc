package import CPipeWire
import Foundation
import SwiftRecord

/// A buffer dequeued from the stream: ours until it is queued back.
///
/// `@unchecked Sendable` because the compiler cannot follow a C pointer: the pointer moves
/// between PipeWire's thread (which dequeues and queues back) and the source's threads
/// (which copy the picture out) only inside `StreamFrames.state`, and its memory stays
/// mapped until the stream's `remove_buffer`, which waits for a source reading it
/// (`StreamFrames.State.borrowed`) to finish, then forgets it under that lock.
package struct HeldBuffer: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<pw_buffer>

    package init(pointer: UnsafeMutablePointer<pw_buffer>) { self.pointer = pointer }

    package func `is`(_ other: HeldBuffer?) -> Bool { other?.pointer == pointer }
}

/// Wakes PipeWire's loop thread to give back the buffers in `StreamFrames.State.returning`
/// (an event source on the stream's loop: signalling it writes to an eventfd, from any thread).
///
/// `@unchecked Sendable`: the pointers are the stream's; `PipeWireStream.stop` removes this
/// from the state (under its lock, where it is used) before the loop goes.
struct LoopSignal: @unchecked Sendable {
    let loop: UnsafeMutablePointer<pw_loop>
    let source: UnsafeMutablePointer<spa_source>

    func signal() { _ = sr_pw_loop_signal_event(loop, source) }
}

/// What the stream's callbacks (on PipeWire's loop thread) share with the source's threads.
///
/// The newest picture stays in its PipeWire buffer, dequeued and held here, until a newer one
/// arrives (the held one then goes back to the compositor) or the source copies it out; a
/// compositor that sends 60 pictures a second to a 30 fps recording costs one copy per
/// recorded picture, and a still screen none after the first.
///
/// The lock is held only to swap references, never across a copy or decode: a source lends
/// itself the held buffer (`borrowHeld`), reads it with the lock released, and gives it
/// back (`StreamFrames.endBorrow`). Meanwhile the process callback swaps newer buffers in
/// as before; the one lent out is not given back to PipeWire while read, but after
/// (`returning`, queued by the loop thread), and `remove_buffer` waits for the read to end.
package final class StreamFrames: Sendable {
    package struct State {
        package var format: StreamFormat?
        /// The newest buffer, dequeued, not yet given back.
        package var held: HeldBuffer?
        /// The held buffer has not been copied out yet.
        package var heldIsNew = false
        /// The cursor as metadata, when the compositor sends it (cursor mode "metadata").
        package var cursor: StreamCursor?
        /// The cursor moved or changed shape since the last picture copied out.
        package var cursorIsNew = false
        /// Pictures the compositor sent (superseded ones included).
        package var received = 0
        /// Pictures that came with damage metadata.
        package var withDamage = 0
        /// What changed, in the stream picture's coordinates, since a picture was last
        /// copied out (the superseded pictures' changes included), when `damageIsWhole` is false.
        package var damage: [PixelRegion] = []
        /// Everything may have changed: a picture came without damage metadata (or with more
        /// rectangles than are kept), the format changed, or none was copied out yet.
        package var damageIsWhole = true
        /// Why the stream cannot go on (its error, the compositor or PipeWire gone).
        package var failure: String?
        /// The stream has streamed: a later "unconnected" means it ended.
        package var streamed = false
        /// When the stream last started streaming (`MonotonicClock`); nil while it is not.
        package var streamingSince: Int64?
        /// The stream went from streaming back to paused (its producer went away or stopped).
        package var pausedAfterStreaming = false
        /// `stop()` was called: an end is expected, not a failure.
        package var stopping = false
        /// `PipeWireStream.reconnect()` is disconnecting: the pause and end are no failure.
        package var reconnecting = false
        /// The buffer a source is reading with the lock released (`borrowHeld`), until it
        /// ends the borrow: never given back or forgotten meanwhile.
        package var borrowed: HeldBuffer?
        /// Buffers superseded while borrowed, read and done with: the loop thread gives them
        /// back (woken through `signal`).
        package var returning: [HeldBuffer] = []
        /// The stream's loop, woken when `returning` fills; nil once the stream stopped.
        var signal: LoopSignal?
        /// Tests: called by a source after borrowing the held buffer, before reading it.
        package var whileBorrowed: (@Sendable () -> Void)?

        package init() { returning.reserveCapacity(4) }
    }

    package let state = Locked(State())

    package init() {}

    /// Ends a source's borrow (`State.borrowHeld`): the buffer stays held, or, superseded
    /// while it was read, goes back to PipeWire from the loop thread. Wakes a
    /// `remove_buffer` or `stop` waiting for the read to end.
    package func endBorrow() {
        state.withLockNotifying { s in
            if s.endBorrow() { s.signal?.signal() }
        }
    }

    /// PipeWire removes the buffer at `address` (`remove_buffer`; its memory goes after
    /// this returns): a source still reading it finishes first (a copy or a decode, never a
    /// wait of its own), then the buffer is forgotten.
    package func remove(_ address: UnsafeMutablePointer<pw_buffer>) {
        _ = state.wait { s -> Bool? in
            if s.borrowed?.pointer == address { return nil }
            s.forget(address)
            return true
        }
    }
}

extension StreamFrames.State {
    /// A picture arrived in `buffer`, now the held one. Returns the buffer to give back at
    /// once: the one it supersedes, unless a source is reading that (its `endBorrow` then
    /// puts it in `returning`).
    package mutating func arrive(_ buffer: HeldBuffer) -> HeldBuffer? {
        let old = held
        held = buffer
        heldIsNew = true
        received += 1
        guard let old, !old.is(borrowed) else { return nil }
        return old
    }

    /// Lends the held buffer to the caller, to read with the lock released, until
    /// `StreamFrames.endBorrow` (which the caller must call); nil when none is held or one
    /// is lent already. The picture is no longer new.
    package mutating func borrowHeld() -> HeldBuffer? {
        guard let held, borrowed == nil else { return nil }
        borrowed = held
        heldIsNew = false
        return held
    }

    /// The borrow ended; true when the buffer was superseded meanwhile and waits in
    /// `returning` for the loop thread.
    package mutating func endBorrow() -> Bool {
        guard let done = borrowed else { return false }
        borrowed = nil
        guard !done.is(held) else { return false }
        returning.append(done)
        return true
    }

    /// PipeWire removes the buffer at `address` (its memory goes): forgotten, held or
    /// waiting to be given back. Only called when no source reads it (`borrowed`).
    package mutating func forget(_ address: UnsafeMutablePointer<pw_buffer>) {
        if held?.pointer == address { (held, heldIsNew) = (nil, false) }
        returning.removeAll { $0.pointer == address }
    }
}

extension StreamFrames {
    /// Waits until the stream agreed on a format (or failed, or `deadline` passed: nil); with
    /// a `stop` to watch, in 100-ms slices, a stop ending the wait (`.cancelled`).
    package func waitForFormat(untilNanoseconds deadline: Int64, stop: WakeUp?) -> Result<StreamFormat, SwiftRecordError>? {
        while MonotonicClock.nanoseconds() < deadline {
            if let stop, stop.isInterrupted {
                return .failure(SwiftRecordError(.cancelled, operation: "pipewire", message: "stopped while waiting for the stream's first format; nothing was recorded"))
            }
            let slice = stop == nil ? deadline : min(deadline, MonotonicClock.nanoseconds() + 100_000_000)
            let agreed = state.wait(untilNanoseconds: slice) { s -> Result<StreamFormat, SwiftRecordError>? in
                if let failure = s.failure { return .failure(SwiftRecordError(.io, operation: "pipewire", message: failure)) }
                return s.format.map { .success($0) }
            }
            if let agreed { return agreed }
        }
        return nil
    }

    /// Waits until the stream holds a picture, fails or stops, or `deadline` passes. Each time
    /// the stream has streamed for `retry` with no picture, calls `reconnect` (a producer that
    /// sends pictures only when something changes may have lost the one it sent as this
    /// reader started: `PipeWireStream.reconnect()`). Returns how often it did.
    package func waitForFirstPicture(untilNanoseconds deadline: Int64, reconnectingAfter retry: Int64, reconnect: () -> Void) -> Int {
        var reconnects = 0
        var reconnectedAt = Int64.min
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return reconnects }
            // Streaming for `retry`, and `retry` since the last reconnect (one that changed nothing never spins).
            let since = state[\.streamingSince].map { max($0, reconnectedAt) }
            if let since, now - since >= retry {
                reconnect()
                reconnects += 1
                reconnectedAt = MonotonicClock.nanoseconds()
                continue
            }
            let wake = min(deadline, (since ?? now) + retry)
            if state.wait(untilNanoseconds: wake, { s in s.held != nil || s.failure != nil || s.stopping ? true : nil }) != nil {
                return reconnects
            }
        }
    }

    package func stateChanged(_ newState: pw_stream_state, error: String?) {
        state.withLockNotifying { s in
            guard !s.reconnecting else { return }
            switch newState {
            case PW_STREAM_STATE_STREAMING:
                s.streamed = true
                s.pausedAfterStreaming = false
                s.streamingSince = MonotonicClock.nanoseconds()
            case PW_STREAM_STATE_PAUSED:
                s.streamingSince = nil
                if s.streamed && !s.stopping { s.pausedAfterStreaming = true }
            case PW_STREAM_STATE_ERROR:
                if !s.stopping && s.failure == nil {
                    s.failure = "the PipeWire stream failed: \(error ?? "no reason given")"
                }
            case PW_STREAM_STATE_UNCONNECTED:
                if !s.stopping && s.failure == nil {
                    s.failure = s.streamed
                        ? "the PipeWire stream ended (\(error ?? "the compositor or PipeWire went away"))"
                        : "the PipeWire stream could not connect (\(error ?? "no reason given"))"
                }
            default:
                break
            }
        }
    }

}

extension StreamFrames.State {
    /// More damaged rectangles than this since the last copy count as the whole picture.
    package static let maximumDamage = 64

    /// Adds one picture's damaged rectangles (nil: unknown, so the whole picture) to what
    /// changed since the last copy.
    package mutating func gather(damage rectangles: UnsafeBufferPointer<spa_region>?) {
        guard !damageIsWhole else { return }
        guard let rectangles, damage.count + rectangles.count <= Self.maximumDamage else {
            damageIsWhole = true
            damage.removeAll(keepingCapacity: true)
            return
        }
        for r in rectangles {
            damage.append(PixelRegion(x: Int(r.position.x), y: Int(r.position.y), width: Int(r.size.width), height: Int(r.size.height)))
        }
    }

    /// What changed since the last copy (nil: the whole picture), then nothing: the held
    /// picture is being copied out.
    package mutating func takeDamage() -> [PixelRegion]? {
        defer {
            damage.removeAll(keepingCapacity: true)
            damageIsWhole = false
        }
        return damageIsWhole ? nil : damage
    }
}
