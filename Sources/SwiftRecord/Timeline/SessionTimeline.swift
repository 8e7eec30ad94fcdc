/// Turns the capture times of pictures into presentation times on a constant-frame-rate
/// grid: one output frame per tick of 1/rate, whatever the pictures' timing.
///
/// Tick `n` shows the first picture captured within half a tick of its time (ticks are
/// centred on `start + n / rate`, so the jitter of a wake-up or a grab never moves a
/// picture to the wrong tick). A picture for a tick that already has one came faster
/// than the rate and is dropped; a tick that passes without a picture repeats the
/// previous one. The first picture is frame 0 whenever it comes, and the grid runs from
/// its capture time. Pausing stops the
/// grid; resuming continues it where it stopped, so the file has no gap and the pause
/// does not show in it. Every decision is returned as an `Event` and counted.
///
/// A value type without threads or clocks of its own: callers pass the times (a real
/// monotonic clock while recording, a fake one in tests), which makes every behaviour
/// testable to the nanosecond. `CaptureSession` drives one on its capture thread.
///
/// The idea of SimpleScreenRecorder's synchronizer, as a pure state machine.
public struct SessionTimeline: Sendable {
    public enum State: String, Sendable {
        case idle, running, paused, stopped
    }

    /// One frame of the output.
    public struct Frame: Sendable, Equatable {
        public enum Source: String, Sendable {
            /// A new picture.
            case captured
            /// No new picture came for this tick: the previous one again.
            case repeated
        }
        /// Position on the grid: 0, 1, 2, …
        public let index: Int64
        /// `index / rate`, exactly.
        public let presentationTime: MediaTime
        /// When the picture shown was captured (for a repeat, the repeated picture's time).
        public let captureTime: MediaTime
        public let source: Source
    }

    /// Why a picture is not shown.
    public enum DropReason: String, Sendable {
        /// Its tick already has a picture: pictures come faster than the frame rate.
        case fasterThanFrameRate = "faster-than-frame-rate"
        /// It was captured while the timeline was paused.
        case paused
        /// It was captured before `start` or after `stop`.
        case notRunning = "not-running"
    }

    public enum Event: Sendable, Equatable {
        /// Output this frame.
        case frame(Frame)
        /// A picture that is not shown.
        case dropped(captureTime: MediaTime, reason: DropReason)
        /// Paused at host time `at`; the next frame (after resuming) is `nextFrame`.
        case paused(at: MediaTime, nextFrame: Int64)
        /// Resumed at host time `at`, continuing with frame `nextFrame`.
        case resumed(at: MediaTime, nextFrame: Int64)
    }

    /// Everything the timeline decided so far.
    public struct Counts: Sendable, Equatable {
        public var captured: Int64 = 0
        public var repeated: Int64 = 0
        public var droppedFasterThanFrameRate: Int64 = 0
        public var droppedPaused: Int64 = 0
        public var droppedNotRunning: Int64 = 0
        public var pauses: Int64 = 0
        /// Host time spent paused, in nanoseconds (the current pause included once it ends).
        public var pausedNanoseconds: Int64 = 0
        public init() {}
    }

    public let frameRate: Rational
    public private(set) var state = State.idle
    public private(set) var counts = Counts()
    /// The grid position the next frame takes; also the number of frames output so far.
    public private(set) var nextFrameIndex: Int64 = 0

    /// Host nanoseconds per second: host times are handled in integer nanoseconds.
    static let nanosecondsPerSecond: Int64 = 1_000_000_000

    private let num: Int128
    private let den: Int128
    /// Host time of `start`.
    private var startNs: Int64 = 0
    /// Host time spent paused before the current segment.
    private var pausedTotalNs: Int64 = 0
    private var pausedAtNs: Int64?
    /// Capture time of the last picture shown; nil until one is.
    private var lastCaptureTime: MediaTime?
    /// The last pause that ended: [start, end) in host nanoseconds.
    private var lastPauseNs: Range<Int64>?

    /// The mapping from host time to output time that pictures follow, for media captured
    /// beside them (audio): frame 0's capture is 0, paused host time is taken out.
    public struct OutputClock: Sendable, Equatable {
        /// Host time of output time 0; nil until the first picture came.
        let originNs: Int64?
        let pausedTotalNs: Int64
        let pausedAtNs: Int64?
        let lastPauseNs: Range<Int64>?

        /// Output time (nanoseconds) of host time `hostNs`, or nil before the first
        /// picture. A host time inside a pause maps to the pause's end.
        public func outputNanoseconds(atHost hostNs: Int64) -> Int64? {
            guard let origin = originNs else { return nil }
            if let pause = lastPauseNs, pause.contains(hostNs) { return pause.upperBound - origin - pausedTotalNs }
            if let at = pausedAtNs, hostNs >= at { return at - origin - pausedTotalNs }
            // Before the last pause: its length is not to be taken out.
            if let pause = lastPauseNs, hostNs < pause.lowerBound {
                return hostNs - origin - (pausedTotalNs - (pause.upperBound - pause.lowerBound))
            }
            return hostNs - origin - pausedTotalNs
        }

        /// Host time from which media is paused (the current pause), if paused.
        public var pausedSinceNs: Int64? { pausedAtNs }
        /// The last pause that ended, as host nanoseconds.
        public var lastPause: Range<Int64>? { lastPauseNs }
    }

    /// The current mapping of host time to output time.
    public var outputClock: OutputClock {
        OutputClock(originNs: lastCaptureTime == nil ? nil : startNs, pausedTotalNs: pausedTotalNs,
                    pausedAtNs: state == .paused ? pausedAtNs : nil, lastPauseNs: lastPauseNs)
    }

    /// A timeline producing `frameRate` frames per second (positive).
    public init(frameRate: Rational) {
        let valid = frameRate.numerator > 0 && frameRate.denominator > 0
        self.frameRate = valid ? frameRate : Rational(30)!
        num = Int128(self.frameRate.numerator)
        den = Int128(self.frameRate.denominator)
    }

    /// `index / rate`, exactly.
    public func presentationTime(ofFrame index: Int64) -> MediaTime {
        MediaTime(value: index * Int64(frameRate.denominator), timescale: frameRate.numerator)
    }

    /// Host time at which the next frame's tick is due: when a pulled source should grab.
    /// Nil unless running.
    public var nextTickTime: MediaTime? {
        guard state == .running else { return nil }
        return MediaTime(value: tickCentreNs(nextFrameIndex), timescale: Int32(SessionTimeline.nanosecondsPerSecond))
    }

    /// Host time from which no picture can belong to the next frame's tick (its window's
    /// end). Nil unless running.
    public var nextTickCloseTime: MediaTime? {
        guard state == .running else { return nil }
        return MediaTime(value: tickCloseNs(nextFrameIndex), timescale: Int32(SessionTimeline.nanosecondsPerSecond))
    }

    /// Host time at which frame `n`'s tick is due, as the grid stands now (later pauses
    /// move it). Nil unless running.
    public func tickTime(ofFrame n: Int64) -> MediaTime? {
        guard state == .running else { return nil }
        return MediaTime(value: tickCentreNs(n), timescale: Int32(SessionTimeline.nanosecondsPerSecond))
    }

    // MARK: - Grid arithmetic (integer nanoseconds, exact rationals)

    private static func ns(_ t: MediaTime) -> Int64 {
        t.convertScale(Int32(nanosecondsPerSecond), rounding: .down).value
    }

    private static func floorDiv(_ a: Int128, _ b: Int128) -> Int128 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func ceilDiv(_ a: Int128, _ b: Int128) -> Int128 {
        -floorDiv(-a, b)
    }

    /// Host nanoseconds of active (not paused) time since start at host time `t`.
    private func activeNs(_ t: Int64) -> Int64 { t - startNs - pausedTotalNs }

    /// The grid tick whose window [centre − ½, centre + ½) holds active time `a`.
    private func tick(active a: Int64) -> Int64 {
        let s = Int128(SessionTimeline.nanosecondsPerSecond)
        let v = SessionTimeline.floorDiv(2 * Int128(a) * num + den * s, 2 * den * s)
        return Int64(clamping: v)
    }

    /// Host time of frame `n`'s tick (its centre), rounded up to the nanosecond.
    private func tickCentreNs(_ n: Int64) -> Int64 {
        let s = Int128(SessionTimeline.nanosecondsPerSecond)
        let offset = SessionTimeline.ceilDiv(Int128(n) * den * s, num)
        return startNs + pausedTotalNs + Int64(clamping: offset)
    }

    /// Host time from which no picture can belong to frame `n` any more (its window's end).
    private func tickCloseNs(_ n: Int64) -> Int64 {
        let s = Int128(SessionTimeline.nanosecondsPerSecond)
        let offset = SessionTimeline.ceilDiv((2 * Int128(n) + 1) * den * s, 2 * num)
        return startNs + pausedTotalNs + Int64(clamping: offset)
    }

    // MARK: - Transitions

    /// Starts the grid at host time `time`. Only from `.idle`.
    public mutating func start(at time: MediaTime) {
        guard state == .idle else { return }
        startNs = SessionTimeline.ns(time)
        state = .running
    }

    /// Repeats the last picture for every tick whose window has closed by host time `now`
    /// without a picture. Call it before waiting for the next tick, and whenever time passed.
    public mutating func advance(to now: MediaTime) -> [Event] {
        guard state == .running else { return [] }
        var events: [Event] = []
        fillRepeats(untilNs: SessionTimeline.ns(now), into: &events)
        return events
    }

    private mutating func fillRepeats(untilNs now: Int64, into events: inout [Event]) {
        // Nothing to repeat before the first picture: the grid waits for it.
        guard let last = lastCaptureTime else { return }
        while tickCloseNs(nextFrameIndex) <= now {
            events.append(.frame(emit(.repeated, captureTime: last)))
        }
    }

    private mutating func emit(_ source: Frame.Source, captureTime: MediaTime) -> Frame {
        let frame = Frame(index: nextFrameIndex, presentationTime: presentationTime(ofFrame: nextFrameIndex),
                          captureTime: captureTime, source: source)
        nextFrameIndex += 1
        switch source {
        case .captured:
            counts.captured += 1
            lastCaptureTime = captureTime
        case .repeated:
            counts.repeated += 1
        }
        return frame
    }

    /// A picture captured at host time `captureTime` arrives. Returns the repeats for
    /// ticks that passed without a picture, then the frame that shows it — or its drop.
    public mutating func frameArrived(at captureTime: MediaTime) -> [Event] {
        switch state {
        case .paused:
            counts.droppedPaused += 1
            return [.dropped(captureTime: captureTime, reason: .paused)]
        case .idle, .stopped:
            counts.droppedNotRunning += 1
            return [.dropped(captureTime: captureTime, reason: .notRunning)]
        case .running:
            break
        }
        let t = SessionTimeline.ns(captureTime)
        let a = activeNs(t)
        guard a >= 0 else {
            counts.droppedNotRunning += 1
            return [.dropped(captureTime: captureTime, reason: .notRunning)]
        }
        var events: [Event] = []
        fillRepeats(untilNs: t, into: &events)
        if lastCaptureTime == nil {
            // The first picture is frame 0 whenever it came: the grid runs from it.
            startNs = t - pausedTotalNs
        }
        let n = tick(active: activeNs(t))
        if n < nextFrameIndex {
            counts.droppedFasterThanFrameRate += 1
            events.append(.dropped(captureTime: captureTime, reason: .fasterThanFrameRate))
            return events
        }
        // Ticks before n have closed by now, so fillRepeats filled them; this loop only
        // guards against rounding at a window's exact edge.
        while n > nextFrameIndex, let last = lastCaptureTime {
            events.append(.frame(emit(.repeated, captureTime: last)))
        }
        events.append(.frame(emit(.captured, captureTime: captureTime)))
        return events
    }

    /// Pauses at host time `time`: ticks that closed before it are repeated first; later
    /// pictures are dropped until `resume`.
    public mutating func pause(at time: MediaTime) -> [Event] {
        guard state == .running else { return [] }
        var events: [Event] = []
        let t = max(SessionTimeline.ns(time), startNs + pausedTotalNs)
        fillRepeats(untilNs: t, into: &events)
        pausedAtNs = t
        state = .paused
        counts.pauses += 1
        events.append(.paused(at: time, nextFrame: nextFrameIndex))
        return events
    }

    /// Resumes at host time `time`: the grid continues from where the pause stopped it.
    public mutating func resume(at time: MediaTime) -> [Event] {
        guard state == .paused, let pausedAt = pausedAtNs else { return [] }
        let pausedFor = max(0, SessionTimeline.ns(time) - pausedAt)
        pausedTotalNs += pausedFor
        counts.pausedNanoseconds += pausedFor
        lastPauseNs = pausedAt..<(pausedAt + pausedFor)
        pausedAtNs = nil
        state = .running
        return [.resumed(at: time, nextFrame: nextFrameIndex)]
    }

    /// Stops at host time `time`, repeating the last picture for ticks that closed before it.
    public mutating func stop(at time: MediaTime) -> [Event] {
        var events: [Event] = []
        if state == .running { fillRepeats(untilNs: SessionTimeline.ns(time), into: &events) }
        if state == .paused, let pausedAt = pausedAtNs {
            let pausedFor = max(0, SessionTimeline.ns(time) - pausedAt)
            pausedTotalNs += pausedFor
            counts.pausedNanoseconds += pausedFor
            pausedAtNs = nil
        }
        state = .stopped
        return events
    }
}
