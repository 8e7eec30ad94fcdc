import Foundation

/// A second (third, …) picture source recorded beside a ``CaptureSession``'s own, into a
/// video input of the same writer: its own track, with its own size and codec settings, on
/// the session's timeline (a camera beside the screen).
///
/// Each frame the session writes takes the newest picture this source has given, at the
/// same presentation time: the track has the session's frame rate, pauses with it and ends
/// with it. The source is read on a thread of its own, so a slow or stalled source (a camera
/// at 15 fps, one unplugged) never holds up the session's pictures: its track repeats the
/// last picture it has. A source that fails or ends mid-recording leaves the recording
/// going: its last picture stays, and ``VideoTrackStatistics/ended`` says why. A source that
/// has given no picture yet (a camera that sends nothing) never leaves its track absent or
/// short: its frames are black until the first picture comes, said once on the log and
/// counted in ``VideoTrackStatistics/framesFilled``.
public struct VideoTrackCapture: Sendable {
    public let source: any CaptureSource
    /// The adaptor of the writer's input for this track, set up for the source's size and
    /// pixel format.
    public let adaptor: PixelBufferAdaptor

    public init(source: any CaptureSource, adaptor: PixelBufferAdaptor) {
        self.source = source
        self.adaptor = adaptor
    }
}

/// What happened on one extra video track (``VideoTrackCapture``).
public struct VideoTrackStatistics: Sendable, Codable, Equatable {
    /// Frames appended to the track: one per frame of the session's pictures (black ones
    /// before the source's first picture included).
    public var framesWritten = 0
    /// Of those, frames that carried a picture new since the track's last frame.
    public var newPictures = 0
    /// Of those, black frames: the source had given no picture yet (a camera that sends
    /// nothing, or is slow to start).
    public var framesFilled = 0
    /// Frames of the session's pictures the track has none for: its encoder's queue was
    /// full (the frame before lasts longer).
    public var framesSkipped = 0
    /// Why the source stopped giving pictures before the recording ended, if it did.
    public var ended: String?

    public init() {}
}

/// One extra video track while the session runs: its source's grabs on a `GrabWorker`'s
/// thread, and the picture each of the session's frames takes. Used on the capture thread
/// only (after `start`); its figures are read through `statistics` from anywhere.
final class VideoTrackRunner: Sendable {
    let capture: VideoTrackCapture
    private struct State {
        var grabs: GrabWorker?
        var pool: PixelBufferPool?
        var last: PixelBuffer?
        var lastIsNew = false
        /// The black picture frames show before the source's first; dropped once it comes.
        var black: PixelBuffer?
        var blackAnnounced = false
        var stats = VideoTrackStatistics()
        var lastTime: MediaTime?
    }
    private let state = Locked(State())

    init(_ capture: VideoTrackCapture) { self.capture = capture }

    var statistics: VideoTrackStatistics { state[\.stats] }
    private var input: AssetWriterInput { capture.adaptor.assetWriterInput }

    /// How long the session's start waits for each extra track's first picture, so the
    /// tracks start together; a source slower than this joins its track later.
    static let firstPictureWait: Duration = .seconds(2)

    /// Starts the source and asks for its first picture, waiting for it up to `firstPictureWait`.
    func start() throws {
        let source = capture.source
        try source.start()
        let pool: PixelBufferPool
        do {
            pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: source.pixelFormat,
                                       maximumBufferCount: input.queueDepth + CaptureSession.sourcePoolHeadroom)
        } catch {
            source.stop()   // started here, not yet a track the session will finish
            throw error
        }
        let grabs = GrabWorker(source: source) {}
        grabs.request(from: pool)
        state.withLock { s in (s.grabs, s.pool) = (grabs, pool) }
        _ = grabs.waitForGrab(untilNanoseconds: MonotonicClock.deadline(after: VideoTrackRunner.firstPictureWait))
    }

    /// The session wrote a frame at `time`: this track gets the newest picture it has at
    /// the same time (without waiting for the source), and the next grab is asked for. A
    /// track the writer refuses (it failed; the pictures' own input says so) ends here.
    func frameWritten(at time: MediaTime) {
        let (grabs, pool) = state.withLock { ($0.grabs, $0.pool) }
        if let grabs, let pool, let result = grabs.takeResult() {
            var again = true
            switch result {
            case .success(let frame?):
                state.withLock { s in
                    s.last = frame.pixelBuffer
                    s.black = nil
                    if !frame.isUnchanged { s.lastIsNew = true }
                }
            case .success(nil):
                again = false
                ended("the source ended")
            case .failure(let error as SwiftRecordError) where error.isNoPictureThisTime:
                break   // every buffer still held: no new picture this time
            case .failure(let error):
                again = false
                ended((error as? SwiftRecordError)?.message ?? "\(error)")
            }
            if again { grabs.request(from: pool) }
        }
        var (picture, isNew, later) = state.withLock { s in (s.last, s.lastIsNew, s.lastTime.map { time > $0 } ?? true) }
        let filled = picture == nil
        var appended = false
        do throws(SwiftRecordError) {
            // (No buffer for it, which cannot happen this early: the frame is skipped, counted.)
            if filled { picture = (try? blackPicture(pool: pool)) ?? nil }
            if let picture, later { appended = try capture.adaptor.appendIfReady(picture, withPresentationTime: time) }
        } catch {
            ended("the writer took no more of it: \(error.message)")
            appended = false
        }
        guard appended else {
            state.withLock { $0.stats.framesSkipped += 1 }
            return
        }
        state.withLock { s in
            s.lastTime = time
            s.lastIsNew = false
            s.stats.framesWritten += 1
            if isNew { s.stats.newPictures += 1 }
            if filled { s.stats.framesFilled += 1 }
        }
    }

    /// The black picture for a frame before the source's first picture (made once, said once).
    private func blackPicture(pool: PixelBufferPool?) throws(SwiftRecordError) -> PixelBuffer? {
        let (black, announce) = state.withLock { s -> (PixelBuffer?, Bool) in
            defer { s.blackAnnounced = true }
            return (s.black, !s.blackAnnounced)
        }
        if announce {
            Log.capture.warning("\(capture.source.identifier) track: no picture from \(capture.source.captureDescription ?? capture.source.identifier) yet; the track is black until its first picture comes")
        }
        if let black { return black }
        guard let pool else { return nil }
        let made = try PixelBuffer.black(from: pool)
        state.withLock { $0.black = made }
        return made
    }

    /// The session paused: the track's encoder writes out what it holds, as the pictures' does.
    func endEncoderRun(at time: MediaTime) throws {
        if state[\.stats.framesWritten] > 0 { try input.endEncoderRun(at: time) }
    }

    /// The source stopped giving pictures: said once, the last picture stays.
    private func ended(_ why: String) {
        let first = state.withLock { s -> Bool in
            guard s.stats.ended == nil else { return false }
            s.stats.ended = why
            return true
        }
        let black = state.withLock { $0.last == nil }
        if first { Log.capture.warning("\(capture.source.identifier) track: \(why); \(black ? "it stays black" : "its last picture stays") to the end") }
    }

    /// Ends the grabs, the source and the input.
    func finish() {
        let grabs = state.withLock { s in
            defer { s.grabs = nil; s.last = nil; s.black = nil }
            return s.grabs
        }
        grabs?.close()
        input.markAsFinished()
        capture.source.stop()
    }
}
