import Foundation

/// The capture thread of a live recording: a `LiveScheduler` fed the clock's time, the pause
/// asked for and each grab's outcome, its decisions carried out here. Grabs run on a
/// `GrabWorker`'s thread; between turns the thread sleeps on the session's `Pacer` until the
/// scheduler's deadline, a grab's return, room in the encoder's queue or a pause wakes it, or
/// a stop interrupts it — a source that hangs (a frozen X server) cannot hold the recording
/// past the limit's end nor a stop.
struct LiveCaptureLoop {
    let session: CaptureSession
    let pool: PixelBufferPool
    let origin: MediaTime

    /// What the scheduler's decisions do: the adaptor, the extra video tracks, the grab
    /// worker and the timing log.
    struct Effects: LiveEffects {
        let session: CaptureSession
        let grabs: GrabWorker
        let pool: PixelBufferPool
        let room = RoomWatch()
        var input: AssetWriterInput { session.adaptor.assetWriterInput }

        func appendIfRoom(_ picture: PixelBuffer, at time: MediaTime) throws -> Bool {
            guard try session.adaptor.appendIfReady(picture, withPresentationTime: time) else { return false }
            for track in session.videoTracks { track.frameWritten(at: time) }
            return true
        }

        func appendWaiting(_ picture: PixelBuffer, at time: MediaTime) throws {
            try session.adaptor.append(picture, withPresentationTime: time)
            for track in session.videoTracks { track.frameWritten(at: time) }
        }

        func endEncoderRun(at time: MediaTime) throws {
            try input.endEncoderRun(at: time)
            for track in session.videoTracks { try track.endEncoderRun(at: time) }
            session.pauseSwitch.markWritten()
        }

        /// The `simulatedSourceStall` hook, taken once the grab is for frame `index` or later
        /// (the tick of the frame itself may close as a repeat, without a grab).
        func takeSimulatedStall(before index: Int64) -> Duration? {
            session.state.withLock { s in
                guard let stall = s.simulatedSourceStall, index >= stall.frame else { return nil }
                s.simulatedSourceStall = nil
                return stall.duration
            }
        }

        func requestGrab(forFrame index: Int64) {
            grabs.request(from: pool, stall: takeSimulatedStall(before: index))
        }

        func watchForRoom() { room.start(on: input, waking: session.pacer) }

        func log(_ entry: TimingEntry) {
            session.timingLog?.record(frame: entry.frame, presentationTime: entry.presentationTime,
                                      captureTime: entry.captureTime, hostTime: entry.hostTime, reason: entry.reason)
        }

        var encodedCount: Int { input.encodedSampleCount }
        var appendedCount: Int { input.appendedSampleCount }
    }

    /// Records until the source ends, the limit or a stop: the sound sources' threads
    /// started, the capture loop run on `thread`, then every sound track brought to the
    /// pictures' end. Throws the first failure, after the tracks are finished.
    static func record(session: CaptureSession, pool: PixelBufferPool, origin: MediaTime, on thread: ThreadTask) async throws {
        for track in session.audioTracks { track.startLive() }
        var failure: (any Error)?
        do {
            try await thread.run(name: "swift-record.capture") { try LiveCaptureLoop(session: session, pool: pool, origin: origin).run() }
        } catch { failure = error }
        let end = picturesEnd(of: session)
        // Every source's sound up to the end first (the tail waits run side by side), then
        // the tracks whose source ended early are filled with silence to the end.
        session.pictures.end = end
        let tail = MonotonicClock.deadline(after: AudioTrackRunner.tailWait)
        for track in session.audioTracks {
            if let audioError = track.finishLive(tailDeadline: tail, grace: CaptureSession.stopGrace), failure == nil { failure = audioError }
        }
        for track in session.audioTracks { track.fillWithSilence(until: end) }
        // The last frame lasts until the pictures' end (with sound, frames left out, or a stop
        // inside a long frame).
        let cut = end < session.presentationTime(ofFrame: session.state[\.endTick])
        if session.audio != nil || session.frameRateMode != .constant || cut, session.statistics.framesWritten > 0 {
            try? session.writer.endSession(atSourceTime: end)
        }
        if let failure { throw failure }
    }

    /// Runs until the source ends, the limit, or a stop; throws why the recording failed.
    func run() throws {
        let s = session
        var scheduler = LiveScheduler<PixelBuffer>(settings: s.timing, startingAt: origin)
        let grabs = GrabWorker(source: s.source) { [pacer = s.pacer] in pacer.wake() }
        defer { grabs.close() }
        var effects = Effects(session: s, grabs: grabs, pool: pool)
        defer { publish(scheduler) }
        do {
            var grab: LiveScheduler<PixelBuffer>.Grab?
            while case .wait(let deadline) = try scheduler.turn(now: s.clock.now(), pauseRequested: s.isPaused, grab: grab, effects: &effects) {
                publish(scheduler)
                grab = try grabs.takeResult().map { try LiveScheduler.grab($0, \.pixelBuffer) }
                if grab != nil { continue }
                if s.pacer.wait(untilNanoseconds: deadline) == .interrupted { scheduler.stop() }
                grab = try grabs.takeResult().map { try LiveScheduler.grab($0, \.pixelBuffer) }
            }
            // A grab still out when the recording ends: given until `stopGrace` after it was
            // asked for; a source stuck longer is reported, the file ending at its last picture.
            let stuck = scheduler.grabOutstandingSince.map {
                !grabs.waitForGrab(untilNanoseconds: $0 + CaptureSession.stopGrace.nanoseconds)
            } ?? false
            if let stopTime = try scheduler.finish(now: s.clock.now(), grabStuck: stuck, effects: &effects) {
                s.state.withLock { $0.stopTime = stopTime }
            }
        } catch let failure as LiveScheduler<PixelBuffer>.Failure {
            throw error(for: failure, statistics: scheduler.statistics)
        }
    }

    /// Where the live pictures end: the end of the last tick, or the stop if it came before
    /// and after the last frame's time, when the encoder's clock is finer than a frame (frames
    /// longer than a tenth of a second): the last frame would otherwise last up to a whole
    /// frame past the stop (a day at 1/86400 fps, against the sound's few seconds).
    static func picturesEnd(of session: CaptureSession) -> MediaTime {
        let (endTick, stop) = session.state.withLock { ($0.endTick, $0.stopTime) }
        let grid = session.presentationTime(ofFrame: endTick)
        guard let stop, endTick > 0, EncoderContext.frameClock(session.frameRate).ticksPerFrame > 1,
              stop < grid, stop > session.presentationTime(ofFrame: endTick - 1) + MediaTime(value: 1, timescale: 1000) else { return grid }
        session.state.withLock { $0.stats.mediaSeconds = min($0.stats.mediaSeconds, stop.seconds) }
        return stop
    }

    /// Makes what the scheduler decided visible to other threads: the figures, where the
    /// pictures end, and the output clock the sound follows.
    private func publish(_ scheduler: LiveScheduler<PixelBuffer>) {
        let (stats, end) = (scheduler.statistics, scheduler.endTick)
        session.state.withLock { s in
            s.stats = stats
            s.endTick = end
        }
        session.pictures.publish(scheduler.timeline.outputClock)
    }

    /// The error for a source that gave no picture within `firstPictureTimeout` of the first grab.
    private func noFirstPicture() -> SwiftRecordError {
        SwiftRecordError(.io, operation: session.source.identifier,
                         message: "no picture within \(Int(CaptureSession.firstPictureTimeout.seconds)) s of starting (\(session.source.captureDescription ?? session.source.identifier)): the source did not answer (a stopped or hung display server, or a camera that sends nothing?)")
    }

    private func error(for failure: LiveScheduler<PixelBuffer>.Failure, statistics: CaptureStatistics) -> SwiftRecordError {
        let source = session.source
        switch failure {
        case .noFirstPicture:
            return noFirstPicture()
        case .stoppedBeforeFirstPicture:
            return SwiftRecordError(.cancelled, operation: source.identifier,
                                    message: "the recording was stopped before \(source.captureDescription ?? source.identifier) sent its first picture; nothing was recorded")
        case .sourceStuck(let since):
            let into = Double(since) / 1e9 - origin.seconds
            let ago = (session.clock.now() - MediaTime(value: since, timescale: 1_000_000_000)).seconds
            return SwiftRecordError(.io, operation: source.identifier,
                                    message: String(format: "the source did not return within %.1f s (it stopped answering %.1f s into the recording, %.1f s ago: a frozen display server?); the file ends at its last picture, %.3f s, and the %d ticks after it had none",
                                                    CaptureSession.stopGrace.seconds, into, ago, statistics.mediaSeconds, statistics.ticksMissed))
        }
    }
}

/// The wait for room in the encoder's queue while frames wait: the queue's next free slot
/// wakes the capture thread's pacer itself (on the writer's thread). Nothing runs while
/// frames go straight in (no polling between ticks), and once the input takes nothing
/// more, no further watch starts.
final class RoomWatch: Sendable {
    private enum State {
        /// None running: the next held frame starts one.
        case idle
        /// The input's queue wakes the pacer at its next free slot.
        case watching
        /// The input takes nothing more (finished, failed or cancelled): no more waits.
        case ended
    }
    private let state = Locked(State.idle)

    /// Starts a watch on `input`, waking `pacer`, unless one runs or the input ended.
    func start(on input: AssetWriterInput, waking pacer: Pacer) {
        let start = state.withLock { s -> Bool in
            guard case .idle = s else { return false }
            s = .watching
            return true
        }
        guard start else { return }
        input.whenReadyForMoreMediaData { [state] closed in
            state.withLock { $0 = closed == nil ? .idle : .ended }
            pacer.wake()
        }
    }
}
