import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Figures of a running or finished capture session.
public struct CaptureStatistics: Sendable, Codable {
    /// Frames handed to the writer.
    public var framesWritten = 0
    /// Frames captured but not written because the encoder was behind (its queue full).
    public var framesDropped = 0
    /// Frame ticks missed because a capture took longer than a frame interval; the previous
    /// picture stays on screen for them (its duration covers the gap).
    public var ticksMissed = 0
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

/// Drives a capture source into an asset writer: pulls frames, stamps presentation times
/// on a constant-frame-rate grid, and appends them through the adaptor.
///
/// A live source is paced by the clock on a capture thread of its own: one grab per frame
/// tick; a frame the encoder has no room for is dropped and counted rather than queued, so
/// the capture thread never waits for the encoder. An offline source (a file, the unpaced
/// synthetic scene) is read as fast as the encoder takes frames.
///
/// The counterpart of `AVCaptureSession` / `RPScreenRecorder` on Apple platforms.
public final class CaptureSession: @unchecked Sendable {
    public let source: any CaptureSource
    public let writer: AssetWriter
    public let adaptor: PixelBufferAdaptor
    public let frameRate: Rational
    public let limit: CaptureLimit

    private let lock = Lock()
    private var stats = CaptureStatistics()
    private let pacer = Pacer()
    private let clock: any HostClock
    private var startedAt: MediaTime?
    private var pool: PixelBufferPool?

    /// Source buffers in flight: the one being captured, the input's queue, one spare.
    static let sourcePoolSize = AssetWriterInput.offlineQueueDepth + 3

    public init(source: any CaptureSource, writer: AssetWriter, adaptor: PixelBufferAdaptor,
                frameRate: Rational, limit: CaptureLimit = CaptureLimit(), clock: any HostClock = MonotonicClock()) {
        self.source = source
        self.writer = writer
        self.adaptor = adaptor
        self.frameRate = frameRate
        self.limit = limit
        self.clock = clock
    }

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

    /// The presentation time of output frame `n`: n / frame rate, exactly.
    func presentationTime(ofFrame n: Int) -> MediaTime {
        MediaTime(value: Int64(n) * Int64(frameRate.denominator), timescale: frameRate.numerator)
    }

    private func reachedLimit(frames n: Int) -> Bool {
        if let f = limit.frames, n >= f { return true }
        if let d = limit.duration, presentationTime(ofFrame: n) >= d { return true }
        return false
    }

    /// Runs until the source ends, the limit is reached, or `stop()`; then marks the input
    /// finished. The caller finishes the writer (so it can do so on every path).
    public func run() async throws -> CaptureStatistics {
        try source.start()
        defer { source.stop() }
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height,
                                       pixelFormat: source.pixelFormat, maximumBufferCount: CaptureSession.sourcePoolSize)
        lock.withLock {
            startedAt = clock.now()
            self.pool = pool
        }
        if source.isLive {
            try await runOnThread { try self.liveLoop(pool: pool) }
        } else {
            try await offlineLoop(pool: pool)
        }
        adaptor.assetWriterInput.markAsFinished()
        return statistics
    }

    private func offlineLoop(pool: PixelBufferPool) async throws {
        var n = 0
        while !reachedLimit(frames: n), !pacer.isInterrupted {
            guard let frame = try source.nextFrame(from: pool) else { break }
            try await adaptor.append(frame.pixelBuffer, withPresentationTime: presentationTime(ofFrame: n))
            n += 1
            let written = n
            lock.withLock {
                stats.framesWritten = written
                stats.mediaSeconds = presentationTime(ofFrame: written).seconds
            }
        }
    }

    /// One grab per tick of the frame-rate grid, on the monotonic clock. A tick whose grab
    /// comes too late is skipped (counted); the frame before it then lasts longer.
    private func liveLoop(pool: PixelBufferPool) throws {
        let start = MonotonicClock().now().convertScale(1_000_000_000).value
        let num = Int64(frameRate.numerator), den = Int64(frameRate.denominator)
        func deadline(_ k: Int64) -> Int64 { start + k * den * 1_000_000_000 / num }
        var tick: Int64 = 0
        while !reachedLimit(frames: Int(tick)) {
            guard pacer.wait(untilNanoseconds: deadline(tick)) else { break }
            let captured: CapturedFrame?
            do {
                captured = try source.nextFrame(from: pool)
            } catch let e as SwiftRecordError where e.kind == .poolExhausted {
                // Every buffer is still queued for the encoder: drop this tick's picture.
                lock.withLock { stats.framesDropped += 1 }
                tick += 1
                continue
            }
            guard let frame = captured else { break }
            let appended = try adaptor.appendIfReady(frame.pixelBuffer, withPresentationTime: presentationTime(ofFrame: Int(tick)))
            tick += 1
            // Skip ticks whose time has already passed.
            let now = MonotonicClock().now().convertScale(1_000_000_000).value
            var missed = 0
            while deadline(tick) < now - 1_000_000, !reachedLimit(frames: Int(tick)) {
                tick += 1
                missed += 1
            }
            let t = tick
            lock.withLock {
                if appended { stats.framesWritten += 1 } else { stats.framesDropped += 1 }
                stats.ticksMissed += missed
                stats.mediaSeconds = presentationTime(ofFrame: Int(t)).seconds
            }
        }
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
