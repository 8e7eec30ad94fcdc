import Foundation

extension CaptureSource {
    /// The source's pictures as an async sequence: `for try await frame in source.frames()`.
    ///
    /// Iterating starts the source and stops it when the loop ends (a `break`, the task's
    /// cancellation, the source's end or an error). A live source is grabbed on a thread of
    /// its own by the live capture loop's scheduler, once per tick of `frameRate`, and the
    /// grab never waits for the consumer: at most `bufferingNewest` pictures wait for it, the
    /// newest kept, the older ones dropped and counted (``CaptureFrames/droppedCount``). A
    /// cancelled task's loop ends at once and the capture thread within a tick. Pictures
    /// come in order; a tick with no new picture (the grab was late) brings none. An offline
    /// source (a file, the unpaced synthetic scene) gives its next picture when asked, as
    /// fast as the consumer takes them: nothing is dropped.
    ///
    /// - Parameters:
    ///   - frameRate: How often a live source is grabbed.
    ///   - bufferingNewest: Pictures that may wait for the consumer (at least one).
    ///   - clock: The live loop's clock.
    public func frames(frameRate: Rational = Rational(30)!, bufferingNewest: Int = 3,
                       clock: any HostClock = MonotonicClock()) -> CaptureFrames {
        CaptureFrames(source: self, frameRate: frameRate, depth: max(1, bufferingNewest), clock: clock)
    }
}

/// The pictures of a capture source as an `AsyncSequence` (see ``CaptureSource/frames(frameRate:bufferingNewest:clock:)``).
/// Iterate it once.
public struct CaptureFrames: AsyncSequence, Sendable {
    public typealias Element = CapturedFrame

    let source: any CaptureSource
    let frameRate: Rational
    let depth: Int
    let clock: any HostClock
    private let drops = Locked(0)

    init(source: any CaptureSource, frameRate: Rational, depth: Int, clock: any HostClock) {
        (self.source, self.frameRate, self.depth, self.clock) = (source, frameRate, depth, clock)
    }

    /// Pictures dropped so far because the consumer was `bufferingNewest` pictures behind.
    public var droppedCount: Int { drops.withLock { $0 } }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<CapturedFrame, any Error>.AsyncIterator

        public mutating func next() async throws -> CapturedFrame? { try await base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: (source.isLive ? live() : offline()).makeAsyncIterator())
    }

    /// A pool for the source's pictures: those waiting, the consumer's, the grab's and the
    /// source's own.
    private func pool() throws -> PixelBufferPool {
        try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: source.pixelFormat,
                            maximumBufferCount: depth + 4)
    }

    private func offline() -> AsyncThrowingStream<CapturedFrame, any Error> {
        let (source, state) = (source, Locked<PixelBufferPool?>(nil))
        return AsyncThrowingStream {
            let pool = try state.withLock { (p: inout PixelBufferPool?) throws -> PixelBufferPool in
                if let p { return p }
                try source.start()
                let made = try self.pool()
                p = made
                return made
            }
            guard !Task.isCancelled, let frame = try source.nextFrame(from: pool) else {
                source.stop()
                return nil
            }
            return frame
        }
    }

    private func live() -> AsyncThrowingStream<CapturedFrame, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: CapturedFrame.self, bufferingPolicy: .bufferingNewest(depth))
        let pacer = Pacer()
        continuation.onTermination = { _ in pacer.interrupt() }
        let run = FrameStreamLoop(source: source, frameRate: frameRate, clock: clock, pacer: pacer, continuation: continuation, drops: drops)
        let pool: PixelBufferPool
        do { pool = try self.pool() } catch {
            continuation.finish(throwing: error)
            return stream
        }
        let thread = Thread { run.run(pool: pool) }
        thread.name = "swift-record.frames"
        thread.qualityOfService = .userInteractive
        thread.start()
        return stream
    }
}

/// The live capture loop's scheduler driving a source for ``CaptureFrames``: the same
/// `LiveScheduler` and `GrabWorker` as a recording's, its "append" handing the picture to
/// the consumer's bounded buffer, which always has room (the oldest is dropped).
struct FrameStreamLoop: Sendable {
    let source: any CaptureSource
    let frameRate: Rational
    let clock: any HostClock
    let pacer: Pacer
    let continuation: AsyncThrowingStream<CapturedFrame, any Error>.Continuation
    let drops: Locked<Int>

    struct Effects: LiveEffects {
        let loop: FrameStreamLoop
        let grabs: GrabWorker
        let pool: PixelBufferPool
        /// The index of the last picture handed over: a tick repeating it hands nothing.
        var lastIndex: Int?
        var appended = 0

        mutating func appendIfRoom(_ picture: CapturedFrame, at time: MediaTime) throws -> Bool {
            appended += 1
            guard picture.index != lastIndex else { return true }
            lastIndex = picture.index
            if case .dropped = loop.continuation.yield(picture) { loop.drops.withLock { $0 += 1 } }
            return true
        }
        mutating func appendWaiting(_ picture: CapturedFrame, at time: MediaTime) throws { _ = try appendIfRoom(picture, at: time) }
        func endEncoderRun(at time: MediaTime) throws {}
        func requestGrab(forFrame index: Int64) { grabs.request(from: pool) }
        func watchForRoom() {}
        func log(_ entry: TimingEntry) {}
        var encodedCount: Int { appended }
        var appendedCount: Int { appended }
    }

    /// Runs on the capture thread until the consumer goes, the source ends or fails.
    func run(pool: PixelBufferPool) {
        do {
            try source.start()
        } catch {
            continuation.finish(throwing: error)
            return
        }
        defer { source.stop() }
        let timing = CaptureTiming(frameRate: frameRate, fillLimit: 1, closeDelay: source.arrivalAllowance)
        var scheduler = LiveScheduler<CapturedFrame>(settings: timing, startingAt: clock.now())
        let grabs = GrabWorker(source: source) { [pacer] in pacer.wake() }
        defer { grabs.close() }
        var effects = Effects(loop: self, grabs: grabs, pool: pool)
        do {
            var grab: LiveScheduler<CapturedFrame>.Grab?
            while case .wait(let deadline) = try scheduler.turn(now: clock.now(), pauseRequested: false, grab: grab, effects: &effects) {
                grab = try grabs.takeResult().map { try LiveScheduler.grab($0) { $0 } }
                if grab != nil { continue }
                if pacer.wait(untilNanoseconds: deadline) == .interrupted { scheduler.stop() }
                grab = try grabs.takeResult().map { try LiveScheduler.grab($0) { $0 } }
            }
            continuation.finish()
        } catch LiveScheduler<CapturedFrame>.Failure.noFirstPicture {
            continuation.finish(throwing: SwiftRecordError(.io, operation: source.identifier,
                                                           message: "no picture within \(Int(timing.firstPictureTimeout.seconds)) s of starting (\(source.captureDescription ?? source.identifier)): the source did not answer"))
        } catch {
            continuation.finish(throwing: error)
        }
    }
}
