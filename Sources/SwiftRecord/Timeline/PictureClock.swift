/// Where a live recording's pictures stand, for the sound recorded beside them: the mapping
/// from host time to output time (frame 0's capture is 0, pauses taken out), published by
/// the capture thread as its timeline changes, and the pictures' end once they stopped.
final class PictureClock: Sendable {
    private struct State {
        var clock: SessionTimeline.OutputClock?
        var end: MediaTime?
    }
    private let state = Locked(State())

    /// The capture thread's timeline now maps host time this way; wakes the sound's threads
    /// waiting for the first picture.
    func publish(_ clock: SessionTimeline.OutputClock) {
        let changed = state.withLock { s in
            guard s.clock != clock else { return false }
            s.clock = clock
            return true
        }
        if changed { state.notifyAll() }
    }

    /// The mapping once the first picture came, waiting for it until `deadline` (monotonic
    /// nanoseconds); nil if it did not come by then.
    func waitForFirstPicture(untilNanoseconds deadline: Int64) -> SessionTimeline.OutputClock? {
        state.wait(untilNanoseconds: deadline) { s -> SessionTimeline.OutputClock? in
            if let c = s.clock, c.originNs != nil { return c }
            return nil
        }
    }

    /// Where the pictures ended, once they did: sound from there on is not needed.
    var end: MediaTime? {
        get { state[\.end] }
        set { state[\.end] = newValue }
    }
}
