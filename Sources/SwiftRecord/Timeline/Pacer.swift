/// Waits until a monotonic deadline, or until woken. The live capture loop sleeps here
/// between frame ticks: one timed wait per frame, no polling. `wake()` ends the current
/// (or next) wait early so the loop looks at a pause, a resume, or room in the encoder's
/// queue; `interrupt()` ends every wait for good (stop).
final class Pacer: Sendable {
    enum Outcome: Equatable {
        /// The deadline passed.
        case deadline
        /// `wake()` was called.
        case woken
        /// `interrupt()` was called: stop.
        case interrupted
    }

    private struct State {
        var interrupted = false
        var woken = false
    }
    private let state = Locked(State())

    /// Sleeps until `deadline` (monotonic nanoseconds, `MonotonicClock.nanoseconds()`), or
    /// until woken or interrupted; nil sleeps until woken or interrupted.
    func wait(untilNanoseconds deadline: Int64?) -> Outcome {
        state.wait(untilNanoseconds: deadline) { s -> Outcome? in
            if s.interrupted { return .interrupted }
            if s.woken {
                s.woken = false
                return .woken
            }
            return nil
        } ?? .deadline
    }

    /// Ends the current wait (or the next one) early with `.woken`.
    func wake() {
        state.withLockNotifying { $0.woken = true }
    }

    func interrupt() {
        state.withLockNotifying { $0.interrupted = true }
    }

    var isInterrupted: Bool { state.withLock { $0.interrupted } }
}
