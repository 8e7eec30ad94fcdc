/// The pause a live recording's user asks for, and whether every frame before it is in the
/// file yet: set from any thread (a key, a signal), read by the capture thread between grabs.
final class PauseSwitch: Sendable {
    private struct State {
        var requested = false
        /// Paused, and every frame before the pause written out (the encoder's look-ahead too).
        var written = false
    }
    private let state = Locked(State())

    /// Asks for a pause (true) or a resume; returns whether a pause is now asked for.
    @discardableResult
    func set(_ paused: Bool? = nil) -> Bool {
        state.withLockNotifying { s in
            let next = paused ?? !s.requested
            if next != s.requested || paused == nil { s.written = false }
            s.requested = next
            return next
        }
    }

    var isRequested: Bool { state[\.requested] }

    /// The capture thread has written out every frame before the pause.
    func markWritten() {
        state.withLockNotifying { s in if s.requested { s.written = true } }
    }

    /// Waits until `deadline` (monotonic nanoseconds) for the frames before the pause to be
    /// written; true at once when not paused, false if the time ran out.
    func waitUntilWritten(untilNanoseconds deadline: Int64) -> Bool {
        state.wait(untilNanoseconds: deadline) { s in !s.requested || s.written ? true : nil } ?? false
    }
}
