import Foundation

/// A picture source with another one over it (a camera in a corner of the screen): each
/// picture of `base` with the newest picture of `overlay` placed by a ``PictureOverlay``.
///
/// The overlay source is read once per picture, from a pool of its own; when neither source
/// has a new picture the previous composition is returned unchanged (so damage-driven
/// screen capture's repeats cost nothing here either), and when only the overlay changed and
/// nobody holds the previous composition, only the overlay's rectangle is written again. An
/// overlay source that fails (a camera unplugged) leaves its last picture in place; the
/// failure is kept in `overlayFailure`.
///
/// The overlay source is read on a thread of its own (each picture takes the newest it has
/// given, without waiting for it), so one that is slow or sends nothing (a stopped camera)
/// never holds up the base's pictures: until its first picture comes the base's pictures go
/// out without it, said once on the log and counted (``OverlayStatistics/framesWithoutOverlay``).
public final class OverlaySource: CaptureSource {
    public let base: any CaptureSource
    public let overlay: any CaptureSource
    public let corner: PictureOverlay.Corner
    public let overlaySize: VideoSize
    public let margin: Int

    private struct State {
        var compositor: PictureOverlay?
        var overlayPool: PixelBufferPool?
        var overlayPicture: PixelBuffer?
        var output: PixelBuffer?
        var lastBase: PixelBuffer?
        var overlayFailure: String?
        var index = 0
        var grabs: GrabWorker?
        var stats = OverlayStatistics()
        var missingAnnounced = false
    }
    private let state = Locked(State())

    /// `overlay`'s pictures scaled to `overlaySize` in `corner` of `base`'s, `margin` pixels in.
    public init(base: any CaptureSource, overlay: any CaptureSource, corner: PictureOverlay.Corner = .bottomRight,
                overlaySize: VideoSize, margin: Int = 16) {
        self.base = base
        self.overlay = overlay
        self.corner = corner
        self.overlaySize = overlaySize
        self.margin = margin
    }

    public var identifier: String { base.identifier }
    public var nativeSize: VideoSize { base.nativeSize }
    public var pixelFormat: PixelFormat { base.pixelFormat }
    public var nativeFrameRate: Rational? { base.nativeFrameRate }
    public var isLive: Bool { base.isLive }
    public var grabStatistics: GrabStatistics? { base.grabStatistics }
    public var notices: [String] { base.notices + overlay.notices }

    public var captureDescription: String? {
        let rect = state.withLock { $0.compositor?.rectangle }
        return (base.captureDescription ?? base.identifier) + ", with " + (overlay.captureDescription ?? overlay.identifier)
            + " over it" + (rect.map { " at \($0)" } ?? " \(corner.rawValue)")
    }

    /// Why the overlay source stopped giving pictures, once it has (its last picture stays).
    public var overlayFailure: String? { state[\.overlayFailure] }

    /// What the overlay showed so far.
    public var overlayStatistics: OverlayStatistics {
        state.withLock { s in
            var stats = s.stats
            stats.ended = s.overlayFailure
            return stats
        }
    }

    /// How long `start()` waits for the overlay's first picture, so the first pictures
    /// have it; a source slower than this joins later.
    static let firstPictureWait: Duration = .seconds(2)

    public func start() throws {
        try base.start()
        do { try overlay.start() } catch { base.stop(); throw error }
        let (corner, overlaySize, margin) = (corner, overlaySize, margin)
        let (baseSize, baseFormat, overlaySource) = (base.nativeSize, base.pixelFormat, overlay)
        do {
            try state.withLock { (s: inout sending State) throws in
                s.compositor = try PictureOverlay(corner: corner, size: overlaySize, margin: margin, baseSize: baseSize, baseFormat: baseFormat)
                s.overlayPool = try PixelBufferPool(width: overlaySource.nativeSize.width, height: overlaySource.nativeSize.height,
                                                    pixelFormat: overlaySource.pixelFormat, maximumBufferCount: 4)
            }
        } catch {
            stop()
            throw error
        }
        // The overlay's grabs on a thread of their own; its first picture waited for a while.
        let grabs = GrabWorker(source: overlay) {}
        state.withLock { s in
            s.grabs = grabs
            if let pool = s.overlayPool { grabs.request(from: pool) }
        }
        _ = grabs.waitForGrab(untilNanoseconds: MonotonicClock.deadline(after: OverlaySource.firstPictureWait))
    }

    public func stop() {
        let grabs = state.withLock { s in
            defer { s.grabs = nil }
            return s.grabs
        }
        grabs?.close()
        overlay.stop()
        base.stop()
    }

    /// The overlay's newest picture, if a grab came back since the last call (the next one
    /// asked for at once); a failure or end kept in `overlayFailure`, its last picture staying.
    private func newestOverlayFrame() -> CapturedFrame? {
        let (grabs, pool, failed) = state.withLock { ($0.grabs, $0.overlayPool, $0.overlayFailure != nil) }
        guard let grabs, let pool, !failed, let result = grabs.takeResult() else { return nil }
        switch result {
        case .success(let frame?):
            grabs.request(from: pool)
            return frame
        case .success(nil):
            state.withLock { $0.overlayFailure = "the overlay's source ended" }
        case .failure(let error as SwiftRecordError) where error.isNoPictureThisTime:
            grabs.request(from: pool)   // every buffer still held: no new picture this time
        case .failure(let error):
            state.withLock { $0.overlayFailure = (error as? SwiftRecordError)?.message ?? "\(error)" }
        }
        return nil
    }

    public func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        guard let frame = try base.nextFrame(from: pool) else { return nil }
        // The overlay's newest picture (its own pool), or its last one when none came since.
        let overlayFrame = newestOverlayFrame()
        let overlayChanged = overlayFrame.map { !$0.isUnchanged } ?? false
        // Neither changed: the previous composition again. Only the overlay changed (the base
        // the same) and nobody else holds the previous composition: it again, only the
        // overlay's rectangle written. Otherwise a buffer from the pool.
        enum Step { case unchanged(CapturedFrame), compose(reusing: PixelBuffer?) }
        let step = state.withLock { (s: inout State) -> Step in
            if let picture = overlayFrame?.pixelBuffer { s.overlayPicture = picture }
            let baseIsSame = frame.isUnchanged && s.lastBase === frame.pixelBuffer
            if baseIsSame, !overlayChanged, s.compositor != nil, s.overlayPicture != nil, let output = s.output {
                s.index += 1
                return .unchanged(CapturedFrame(pixelBuffer: output, captureTime: frame.captureTime, index: s.index, isUnchanged: true))
            }
            var previous = s.output
            s.output = nil
            guard baseIsSame, previous != nil, isKnownUniquelyReferenced(&previous), previous?.isUniquelyReferenced == true else {
                return .compose(reusing: nil)
            }
            return .compose(reusing: previous)
        }
        let reused: PixelBuffer?
        switch step {
        case .unchanged(let again): return again
        case .compose(let previous): reused = previous
        }
        let output = try reused ?? pool.makePixelBuffer()
        let (result, missing) = state.withLock { (s: inout State) -> (Result<CapturedFrame, SwiftRecordError>, Bool) in
            guard let compositor = s.compositor, let overlayPicture = s.overlayPicture else {
                // No overlay picture yet: the base's picture alone (said once, counted).
                s.stats.framesWithoutOverlay += 1
                defer { s.missingAnnounced = true }
                return (.success(frame), !s.missingAnnounced)
            }
            s.index += 1
            do throws(SwiftRecordError) {
                try compositor.compose(frame.pixelBuffer, overlayPicture, into: output, baseIsSame: reused != nil, overlayIsSame: !overlayChanged)
            } catch {
                return (.failure(error), false)
            }
            s.output = output
            s.lastBase = frame.pixelBuffer
            return (.success(CapturedFrame(pixelBuffer: output, captureTime: frame.captureTime, index: s.index)), false)
        }
        if missing {
            Log.capture.warning("no picture from \(overlay.captureDescription ?? overlay.identifier) yet: the screen is recorded without the overlay until its first picture comes")
        }
        return try result.get()
    }
}

/// What an ``OverlaySource``'s overlay showed.
public struct OverlayStatistics: Sendable, Codable, Equatable {
    /// Pictures that went out without the overlay: its source had given no picture yet
    /// (a camera that sends nothing, or is slow to start).
    public var framesWithoutOverlay = 0
    /// Why the overlay's source stopped giving pictures, if it did (its last picture stays).
    public var ended: String?

    public init() {}
}
