/// How a capture session fills its grid of frame ticks.
public enum FrameRateMode: Sendable, Equatable {
    /// One frame per tick: a tick without a new picture repeats the previous one. Every
    /// frame lasts one tick; what editors and most players expect.
    case constant
    /// A frame only for a tick whose picture changed; an unchanged tick (a repeat, or a
    /// source that says its picture is unchanged) lengthens the previous frame instead of
    /// being encoded again. Variable frame rate: at most the session's rate, and at least
    /// one frame every `maximumInterval` (make it the key-frame interval, so a still screen
    /// still gets its key frames). Timestamps stay on the session's grid.
    case content(maximumInterval: MediaTime)
}

/// Which ticks a session recording at a content-driven frame rate writes.
///
/// A changed picture is written. So is an unchanged tick while the encoder still holds
/// the last changed picture: an encoder with a look-ahead (x264 holds some twenty frames)
/// gives a frame out only after more frames have gone in, so a change followed by ticks
/// that were not written would sit in the encoder, out of a live stream and out of a
/// killed recording's file, until the next change. Repeats push it out, then stop. An
/// unchanged tick is also written once `maximumTicks` have passed since the last frame;
/// when `settles` (live outputs: a viewer joining needs the key frame that frame brings),
/// that frame is pushed out too.
struct ContentFrameGate {
    let maximumTicks: Int64
    let settles: Bool
    private var lastWritten: Int64?
    /// The input's appended-sample count once the last frame that must reach the file
    /// (a change) was appended; nil once the encoder has given it out.
    private var pending: Int?

    init(maximumTicks: Int64, settles: Bool) {
        self.maximumTicks = max(1, maximumTicks)
        self.settles = settles
    }

    /// Whether to write tick `index`, whose picture is `unchanged` or not, when the encoder
    /// has given out `encoded` samples.
    mutating func admits(tick index: Int64, unchanged: Bool, encoded: Int) -> Bool {
        if let p = pending, encoded >= p { pending = nil }
        guard unchanged, let last = lastWritten else { return true }
        return pending != nil || index - last >= maximumTicks
    }

    /// Tick `index` was appended (the input's count is now `appended`): a change, or a
    /// frame written for the interval.
    mutating func wrote(tick index: Int64, unchanged: Bool, appended: Int) {
        let interval = lastWritten.map { index - $0 >= maximumTicks } ?? true
        lastWritten = index
        if !unchanged || (interval && settles) { pending = appended }
    }
}
