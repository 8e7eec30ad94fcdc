internal import CWayland
import Foundation
import SwiftRecord

/// A buffer dequeued from the stream: ours until it is queued back.
///
/// `@unchecked Sendable` because the compiler cannot follow a C pointer: the pointer moves
/// between PipeWire's thread (which dequeues and queues back) and the source's threads
/// (which copy the picture out) only inside `StreamFrames.state`, and its memory stays
/// mapped until the stream's `remove_buffer`, which clears it under that lock first.
struct HeldBuffer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<pw_buffer>
}

/// What the stream's callbacks (on PipeWire's loop thread) share with the source's threads.
///
/// The newest picture stays in its PipeWire buffer, dequeued and held here, until a newer one
/// arrives (the held one then goes back to the compositor) or the source copies it out; a
/// compositor that sends 60 pictures a second to a 30 fps recording costs one copy per
/// recorded picture, and a still screen none after the first.
final class StreamFrames: Sendable {
    struct State {
        var format: StreamFormat?
        /// The newest buffer, dequeued, not yet given back.
        var held: HeldBuffer?
        /// The held buffer has not been copied out yet.
        var heldIsNew = false
        /// The cursor as metadata, when the compositor sends it (cursor mode "metadata").
        var cursor: StreamCursor?
        /// The cursor moved or changed shape since the last picture copied out.
        var cursorIsNew = false
        /// Pictures the compositor sent (superseded ones included).
        var received = 0
        /// Pictures that came with damage metadata.
        var withDamage = 0
        /// What changed, in the stream picture's coordinates, since a picture was last
        /// copied out (the superseded pictures' changes included), when `damageIsWhole` is false.
        var damage: [PixelRegion] = []
        /// Everything may have changed: a picture came without damage metadata (or with more
        /// rectangles than are kept), the format changed, or none was copied out yet.
        var damageIsWhole = true
        /// Why the stream cannot go on (its error, the compositor or PipeWire gone).
        var failure: String?
        /// The stream has streamed: a later "unconnected" means it ended.
        var streamed = false
        /// The stream went from streaming back to paused (its producer went away or stopped).
        var pausedAfterStreaming = false
        /// `stop()` was called: an end is expected, not a failure.
        var stopping = false
    }

    let state = Locked(State())
}

extension StreamFrames {
    /// Waits until the stream agreed on a format (or failed, or `deadline` passed: nil); with
    /// a `stop` to watch, in 100-ms slices, a stop ending the wait (`.cancelled`).
    func waitForFormat(untilNanoseconds deadline: Int64, stop: WakeUp?) -> Result<StreamFormat, SwiftRecordError>? {
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

    func stateChanged(_ newState: pw_stream_state, error: String?) {
        state.withLockNotifying { s in
            switch newState {
            case PW_STREAM_STATE_STREAMING:
                s.streamed = true
                s.pausedAfterStreaming = false
            case PW_STREAM_STATE_PAUSED:
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
    static let maximumDamage = 64

    /// Adds one picture's damaged rectangles (nil: unknown, so the whole picture) to what
    /// changed since the last copy.
    mutating func gather(damage rectangles: UnsafeBufferPointer<spa_region>?) {
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
    mutating func takeDamage() -> [PixelRegion]? {
        defer {
            damage.removeAll(keepingCapacity: true)
            damageIsWhole = false
        }
        return damageIsWhole ? nil : damage
    }
}
