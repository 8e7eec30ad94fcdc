import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Figures of a running or finished capture session.
public struct CaptureStatistics: Sendable, Codable {
    /// Frames handed to the writer: new pictures and repeats.
    public var framesWritten = 0
    /// New pictures written.
    public var framesCaptured = 0
    /// Ticks that repeated the previous picture because no new one came in time (a grab
    /// that came late, a source that stalled).
    public var framesRepeated = 0
    /// Frames not written because the encoder was behind (its queue full) or every
    /// capture buffer was in use: the backpressure drops.
    public var framesDropped = 0
    /// Pictures dropped because their tick already had one (they came faster than the rate).
    public var framesDroppedEarly = 0
    /// Pictures dropped because they were captured while paused.
    public var framesDroppedPaused = 0
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
}

/// When a capture session stops by itself.
public struct CaptureLimit: Sendable {
    public var frames: Int?
    public var duration: MediaTime?
    public init(frames: Int? = nil, duration: MediaTime? = nil) {
        self.frames = frames
        self.duration = duration
    }
}

/// Drives a capture source into an asset writer: pulls frames, turns their capture times
/// into presentation times on a constant-frame-rate grid, and appends them through the adaptor.
///
/// A live source is paced on a capture thread of its own by a `SessionTimeline`: one grab
/// per frame tick, at the tick's time (a timed wait, no polling). A tick whose grab came
/// too late repeats the previous picture, so the file has exactly one frame per tick.
/// The capture thread never waits for the encoder: a frame the encoder has no room for
/// is held (one at most) and handed over as soon as the queue has room; if the next frame
/// comes first, the held one is dropped and counted. Memory stays flat however far
/// behind the encoder falls. `pause()` and `resume()` stop and continue the grid without
/// a gap in the file.
///
/// An offline source (a file, the unpaced synthetic scene) is read as fast as the encoder
/// takes frames, frame n at n / rate; pausing does not apply to it.
///
/// For a live source, the session's clock and the source's must be the same monotonic
/// clock (the default).
///
/// The counterpart of `AVCaptureSession` / `RPScreenRecorder` on Apple platforms.
public final class CaptureSession: @unchecked Sendable {
    public let source: any CaptureSource
    public let writer: AssetWriter
    public let adaptor: PixelBufferAdaptor
    public let frameRate: Rational
    public let limit: CaptureLimit
    /// Where each frame's timing decision is written, if anywhere.
    public let timingLog: TimingLog?

    private let lock = Lock()
    private var stats = CaptureStatistics()
    private let pacer = Pacer()
    private let clock: any HostClock
    private var startedAt: MediaTime?
    private var pool: PixelBufferPool?
    private var pauseRequested = false
    /// Set while a frame waits for room in the encoder's queue: room then wakes the capture thread.
    private var waitingForRoom = false

    /// Source buffers in flight: the one being captured, the input's queue, one spare.
    static let sourcePoolSize = AssetWriterInput.offlineQueueDepth + 3

    public init(source: any CaptureSource, writer: AssetWriter, adaptor: PixelBufferAdaptor,
                frameRate: Rational, limit: CaptureLimit = CaptureLimit(), clock: any HostClock = MonotonicClock(),
                timingLog: TimingLog? = nil) {
        self.source = source
        self.writer = writer
        self.adaptor = adaptor
        self.frameRate = frameRate
        self.limit = limit
        self.clock = clock
        self.timingLog = timingLog
    }

    // FAULT-INJECTION (tests only; set before run()): in the live loop, right before the grab
    // for output frame `frame` (or the first grab after it), the capture thread sleeps `duration` once: a burst of late
    // ticks (repeats, then drops while the encoder's queue is full).
    package var simulatedSourceStall: (frame: Int64, duration: Duration)? {
        get { lock.withLock { storedSourceStall } }
        set { lock.withLock { storedSourceStall = newValue } }
    }
    private var storedSourceStall: (frame: Int64, duration: Duration)?

    public var statistics: CaptureStatistics {
        lock.withLock {
            var s = stats
            if let t = startedAt { s.elapsedSeconds = (clock.now() - t).seconds }
            s.pixelBufferAllocations = (pool?.storageAllocationCount ?? 0) + adaptor.conversionStorageAllocations
            return s
        }
    }

    /// Asks the session to stop after the frame in progress. Safe from any thread or a signal handler's queue.
    public func stop() { pacer.interrupt() }

    /// Pauses a live recording: no grabs, no frames, until `resume()`. Safe from any thread.
    public func pause() { setPaused(true) }

    /// Resumes a paused recording; the file continues without a gap.
    public func resume() { setPaused(false) }

    /// Pauses if running, resumes if paused. Returns true if now paused.
    @discardableResult
    public func togglePause() -> Bool {
        let paused: Bool = lock.withLock {
            pauseRequested.toggle()
            return pauseRequested
        }
        pacer.wake()
        return paused
    }

    /// True when a pause has been asked for (and not yet undone).
    public var isPaused: Bool { lock.withLock { pauseRequested } }

    private func setPaused(_ paused: Bool) {
        lock.withLock { pauseRequested = paused }
        pacer.wake()
    }

    /// The presentation time of output frame `n`: n / frame rate, exactly.
    func presentationTime(ofFrame n: Int) -> MediaTime {
        MediaTime(value: Int64(n) * Int64(frameRate.denominator), timescale: frameRate.numerator)
    }

    /// How many frames the limit allows (frames whose time is before the duration), if any.
    var frameLimit: Int64? {
        var result = limit.frames.map(Int64.init)
        if let d = limit.duration, d.isValid, frameRate.numerator > 0 {
            // Frames n with n * den / num < d: n < d * num / den.
            let n = Int128(d.value) * Int128(frameRate.numerator)
            let q = Int128(d.timescale) * Int128(frameRate.denominator)
            let count = Int64(clamping: (n + q - 1) / q)
            result = min(result ?? count, count)
        }
        return result
    }

    /// Runs until the source ends, the limit is reached, or `stop()`; then marks the input
    /// finished. The caller finishes the writer (so it can do so on every path).
    public func run() async throws -> CaptureStatistics {
        try source.start()
        defer { source.stop() }
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height,
                                       pixelFormat: source.pixelFormat, maximumBufferCount: CaptureSession.sourcePoolSize)
        let t0 = clock.now()
        lock.withLock {
            startedAt = t0
            self.pool = pool
        }
        defer { timingLog?.close() }
        let roomQueue = DispatchQueue(label: "swift-record.capture-room")
        defer {
            adaptor.assetWriterInput.markAsFinished()
            // No more wake-ups are scheduled once the input is finished; let those already
            // queued run before returning, so none outlives the session.
            roomQueue.sync {}
        }
        if source.isLive {
            // Room in the encoder's queue wakes the capture thread when a frame waits for it.
            adaptor.assetWriterInput.requestMediaDataWhenReady(on: roomQueue) { [weak self] in
                guard let self else { return }
                if self.lock.withLock({ self.waitingForRoom }) { self.pacer.wake() }
            }
            try await runOnThread { try self.liveLoop(pool: pool, origin: t0) }
        } else {
            try await offlineLoop(pool: pool, origin: t0)
        }
        return statistics
    }

    private func offlineLoop(pool: PixelBufferPool, origin: MediaTime) async throws {
        var n = 0
        let maxFrames = frameLimit
        while maxFrames.map({ Int64(n) < $0 }) ?? true, !pacer.isInterrupted {
            guard let frame = try source.nextFrame(from: pool) else { break }
            let pts = presentationTime(ofFrame: n)
            try await adaptor.append(frame.pixelBuffer, withPresentationTime: pts)
            timingLog?.record(frame: Int64(n), presentationTime: pts, captureTime: frame.captureTime.seconds,
                              hostTime: (clock.now() - origin).seconds, reason: "captured")
            n += 1
            let written = n
            lock.withLock {
                stats.framesWritten = written
                stats.framesCaptured = written
                stats.mediaSeconds = presentationTime(ofFrame: written).seconds
            }
        }
    }

    /// A frame that found the encoder's queue full, waiting for room.
    private struct Held {
        let buffer: PixelBuffer
        let frame: SessionTimeline.Frame
    }

    /// The live loop's state, used only on the capture thread.
    private struct LiveState {
        var timeline: SessionTimeline
        /// The picture repeats show: the last one captured and shown.
        var last: PixelBuffer?
        var held: Held?
        var done = false
    }

    /// One grab per tick of the timeline's grid; see the type's documentation.
    private func liveLoop(pool: PixelBufferPool, origin: MediaTime) throws {
        var state = LiveState(timeline: SessionTimeline(frameRate: frameRate))
        let maxFrames = frameLimit
        var stall = simulatedSourceStall // FAULT-INJECTION
        state.timeline.start(at: origin)
        while !state.done {
            if let maxFrames, state.timeline.nextFrameIndex >= maxFrames { break }
            // A pause or resume asked for since the last tick.
            let wantPause = lock.withLock { pauseRequested }
            if wantPause && state.timeline.state == .running {
                try handle(state.timeline.pause(at: clock.now()), captured: nil, state: &state, origin: origin, limit: maxFrames)
                lock.withLock { stats.isPaused = true; stats.pauses += 1 }
            } else if !wantPause && state.timeline.state == .paused {
                try handle(state.timeline.resume(at: clock.now()), captured: nil, state: &state, origin: origin, limit: maxFrames)
                let pausedSeconds = Double(state.timeline.counts.pausedNanoseconds) / 1e9
                lock.withLock { stats.isPaused = false; stats.pausedSeconds = pausedSeconds }
            }
            if state.done { break }
            // A held frame goes as soon as there is room.
            if let held = state.held, adaptor.assetWriterInput.isReadyForMoreMediaData {
                if try adaptor.appendIfReady(held.buffer, withPresentationTime: held.frame.presentationTime) {
                    state.held = nil
                    written(held.frame, origin: origin)
                }
            }
            let holding = state.held != nil
            lock.withLock { waitingForRoom = holding }
            let deadline = state.timeline.nextTickTime.map { $0.convertScale(1_000_000_000, rounding: .up).value }
            switch pacer.wait(untilNanoseconds: deadline) {
            case .interrupted: state.done = true; continue
            case .woken: continue
            case .deadline: break
            }
            // The tick: repeat for ticks that closed without a picture, then grab.
            try handle(state.timeline.advance(to: clock.now()), captured: nil, state: &state, origin: origin, limit: maxFrames)
            if state.done { break }
            if let maxFrames, state.timeline.nextFrameIndex >= maxFrames { break }
            // Every tick closed so far has its frame: the last picture is needed no more, and
            // letting go of it lets a source reuse its buffer for this grab (an X11 capture then
            // keeps one shared-memory segment busy, not two). A tick closing during the grab
            // shows the new picture.
            state.last = nil
            if let s = stall, state.timeline.nextFrameIndex >= s.frame { // FAULT-INJECTION (>=: frame may have been a repeat)
                stall = nil
                Thread.sleep(forTimeInterval: Double(s.duration.components.seconds) + Double(s.duration.components.attoseconds) / 1e18)
            }
            let captured: CapturedFrame?
            do {
                captured = try source.nextFrame(from: pool)
            } catch let e as SwiftRecordError where e.kind == .poolExhausted {
                // Every capture buffer is still held (by the encoder): drop this tick's picture.
                lock.withLock { stats.framesDropped += 1 }
                timingLog?.record(frame: nil, presentationTime: nil, captureTime: nil,
                                  hostTime: (clock.now() - origin).seconds, reason: "dropped-no-buffer")
                continue
            }
            guard let frame = captured else { break }
            try handle(state.timeline.frameArrived(at: frame.captureTime), captured: frame.pixelBuffer,
                       state: &state, origin: origin, limit: maxFrames)
        }
        lock.withLock { waitingForRoom = false }
        try handle(state.timeline.stop(at: clock.now()), captured: nil, state: &state, origin: origin, limit: maxFrames)
        // Capture is over: the held frame may wait for the encoder now.
        if let held = state.held {
            state.held = nil
            try adaptor.append(held.buffer, withPresentationTime: held.frame.presentationTime)
            written(held.frame, origin: origin)
        }
        let counts = state.timeline.counts
        lock.withLock {
            stats.isPaused = false
            stats.pausedSeconds = Double(counts.pausedNanoseconds) / 1e9
        }
    }

    /// Carries out the timeline's decisions: appends frames (new pictures or repeats of the
    /// last), counts drops, and logs each.
    private func handle(_ events: [SessionTimeline.Event], captured: PixelBuffer?, state: inout LiveState,
                        origin: MediaTime, limit maxFrames: Int64?) throws {
        for event in events {
            let host = (clock.now() - origin).seconds
            switch event {
            case .frame(let frame):
                if let maxFrames, frame.index >= maxFrames {
                    state.done = true
                    continue
                }
                if frame.source == .captured { state.last = captured }
                guard let buffer = frame.source == .captured ? captured : state.last ?? captured else { continue }
                if let held = state.held {
                    // A newer frame is here: the held one goes now or never.
                    state.held = nil
                    if try adaptor.appendIfReady(held.buffer, withPresentationTime: held.frame.presentationTime) {
                        written(held.frame, origin: origin)
                    } else {
                        droppedBusy(held.frame, origin: origin)
                    }
                }
                if try adaptor.appendIfReady(buffer, withPresentationTime: frame.presentationTime) {
                    written(frame, origin: origin)
                } else {
                    state.held = Held(buffer: buffer, frame: frame)
                }
            case .dropped(let captureTime, let reason):
                lock.withLock {
                    switch reason {
                    case .fasterThanFrameRate: stats.framesDroppedEarly += 1
                    case .paused: stats.framesDroppedPaused += 1
                    case .notRunning: break
                    }
                }
                timingLog?.record(frame: nil, presentationTime: nil, captureTime: (captureTime - origin).seconds,
                                  hostTime: host, reason: "dropped-\(reason.rawValue)")
            case .paused(_, let next):
                timingLog?.record(frame: next, presentationTime: state.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "paused")
            case .resumed(_, let next):
                timingLog?.record(frame: next, presentationTime: state.timeline.presentationTime(ofFrame: next),
                                  captureTime: nil, hostTime: host, reason: "resumed")
            }
        }
    }

    private func written(_ frame: SessionTimeline.Frame, origin: MediaTime) {
        let media = presentationTime(ofFrame: Int(frame.index) + 1).seconds
        lock.withLock {
            stats.framesWritten += 1
            if frame.source == .captured {
                stats.framesCaptured += 1
            } else {
                stats.framesRepeated += 1
                stats.ticksMissed += 1
            }
            stats.mediaSeconds = media
        }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: frame.source.rawValue)
    }

    private func droppedBusy(_ frame: SessionTimeline.Frame, origin: MediaTime) {
        lock.withLock { stats.framesDropped += 1 }
        timingLog?.record(frame: frame.index, presentationTime: frame.presentationTime,
                          captureTime: (frame.captureTime - origin).seconds,
                          hostTime: (clock.now() - origin).seconds, reason: "dropped-encoder-busy")
    }

    /// Runs `body` on a thread of its own (the capture thread), resuming when it returns.
    private func runOnThread(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            let thread = Thread {
                do { try body(); c.resume() } catch { c.resume(throwing: error) }
            }
            thread.name = "swift-record.capture"
            thread.qualityOfService = .userInteractive
            thread.start()
        }
    }
}
