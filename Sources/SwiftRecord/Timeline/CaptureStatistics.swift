/// Figures of a running or finished capture session.
public struct CaptureStatistics: Sendable, Codable {
    /// Frames handed to the writer: new pictures and repeats.
    public var framesWritten = 0
    /// New pictures written.
    public var framesCaptured = 0
    /// Ticks that repeated the previous picture because no new one came in time (a grab
    /// that came late, a source that stalled).
    public var framesRepeated = 0
    /// Pictures not captured because every capture buffer was in use (their ticks repeat
    /// the last picture), and ticks left as a gap (`ticksInGaps`): the backpressure drops.
    public var framesDropped = 0
    /// Ticks whose frame waited for room in the encoder's queue behind later ticks and was
    /// written late (after a stall): the file still has one frame per tick.
    public var ticksFilled = 0
    /// Ticks that waited for room longer than `CaptureSession.maximumFill`: no frame in the
    /// file (the frame before lasts longer; the file's rate is no longer constant there).
    public var ticksInGaps = 0
    /// Pictures dropped because their tick already had one (they came faster than the rate).
    public var framesDroppedEarly = 0
    /// Pictures dropped because they were captured while paused.
    public var framesDroppedPaused = 0
    /// Ticks left out at a content-driven frame rate (`FrameRateMode.content`): their
    /// picture had not changed, so the frame before them lasts longer.
    public var ticksUnchanged = 0
    /// Same as `framesRepeated` (the frame ticks a late grab missed); kept for older readers.
    public var ticksMissed = 0
    /// How many times the session was paused, and for how long in all.
    public var pauses = 0
    public var pausedSeconds = 0.0
    /// True while paused.
    public var isPaused = false
    /// Seconds since the session started (wall clock for live sources).
    public var elapsedSeconds = 0.0
    /// Seconds of media written.
    public var mediaSeconds = 0.0
    /// Fresh picture storage allocated by the session's pools (source buffers and converted
    /// buffers). Constant once warmed up: steady-state recording allocates none per frame.
    public var pixelBufferAllocations = 0
    /// The sound recorded beside the pictures, when there is any: the first source's.
    public var audio: AudioCaptureStatistics?
    /// Every sound source's, in the session's order (one track each).
    public var audioTracks: [AudioCaptureStatistics] = []
    /// Whole, partial and skipped grabs, from a source that follows the screen's changes.
    public var grabs: GrabStatistics?
    /// Every extra video track's (``VideoTrackCapture``), in the session's order.
    public var videoTracks: [VideoTrackStatistics] = []
}

/// When a capture session stops by itself.
public struct CaptureLimit: Sendable {
    /// Stop after this many frames.
    public var frames: Int?
    /// Stop once this much media time is written.
    public var duration: MediaTime?
    /// A limit of frames, of media time, of both (whichever comes first) or neither.
    public init(frames: Int? = nil, duration: MediaTime? = nil) {
        self.frames = frames
        self.duration = duration
    }
}
