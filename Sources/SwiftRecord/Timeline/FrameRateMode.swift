/// How a capture session fills its grid of frame ticks.
public enum FrameRateMode: Sendable, Equatable {
    /// One frame per tick: a tick without a new picture repeats the previous one. Every
    /// frame lasts one tick; what editors and most players expect.
    case constant
    /// A frame only for a tick whose picture changed; an unchanged tick (a repeat, or a
    /// source that says its picture is unchanged) lengthens the previous frame instead of
    /// being encoded again. Variable frame rate: at most the session's rate; a tick is
    /// written anyway once `maximumInterval` has passed since the last key frame, which an
    /// encoder given the same `VideoSettings.maxKeyFrameIntervalDuration` makes a key frame,
    /// so a still screen still gets its key frames. Timestamps stay on the session's grid.
    /// Use an encoder that does not reorder frames (`AVVideoAllowFrameReorderingKey`
    /// false, or x264's `bf` 0): with B-frames, a frame's decode time is that of a frame a
    /// few frames earlier, which can be seconds earlier here.
    case content(maximumInterval: MediaTime)
}

/// Which ticks a session recording at a content-driven frame rate writes.
///
/// A changed picture is written. So is an unchanged tick while the encoder still holds
/// the last changed picture: an encoder with a look-ahead (x264 holds some twenty frames)
/// gives a frame out only after more frames have gone in, so a change followed by ticks
/// that were not written would sit in the encoder, out of a live stream and out of a
/// killed recording's file, until the next change. Repeats push it out, then stop. An
/// unchanged tick is also written once `maximumTicks` have passed since the last key frame
/// (the first frame, and every frame written that long after the key frame before it,
/// which the encoder's time limit on key-frame intervals makes one); when `settles` (live
/// outputs: a viewer joining needs that key frame), it is pushed out too.
struct ContentFrameGate {
    let maximumTicks: Int64
    let settles: Bool
    private var lastWritten: Int64?
    private var lastKey: Int64?
    /// The input's appended-sample count once the last frame that must reach the file
    /// (a change) was appended; nil once it is written.
    private var pending: Int?

    init(maximumTicks: Int64, settles: Bool) {
        self.maximumTicks = max(1, maximumTicks)
        self.settles = settles
    }

    /// Whether to write tick `index`, whose picture is `unchanged` or not, when the encoder
    /// has given out `encoded` samples.
    mutating func admits(tick index: Int64, unchanged: Bool, encoded: Int) -> Bool {
        // One packet more than the change's own: the writer holds each packet until the
        // next one gives its duration, so only then is the change in the file.
        if let p = pending, encoded > p { pending = nil }
        guard unchanged, lastWritten != nil, let key = lastKey else { return true }
        return pending != nil || index - key >= maximumTicks
    }

    /// Tick `index` was appended (the input's count is now `appended`): a change, a repeat
    /// pushing one out, or a frame written for the interval.
    mutating func wrote(tick index: Int64, unchanged: Bool, appended: Int) {
        let key = lastKey.map { index - $0 >= maximumTicks } ?? true
        lastWritten = index
        if key { lastKey = index }
        if !unchanged || (key && settles) { pending = appended }
    }
}
