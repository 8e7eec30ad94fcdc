import Foundation

/// One sound source of a ``CaptureSession`` while it runs, beside `VideoTrackRunner`: live,
/// a thread that places every buffer the source delivers on the pictures' output clock
/// (pauses taken out, faded at their edges) and appends it to its input; offline, sound
/// appended as the pictures reach it. Its figures are read through `statistics` from anywhere.
final class AudioTrackRunner: Sendable {
    let capture: AudioCapture
    /// The track's index among the session's sound sources, named in log lines when there
    /// are several (nil for one).
    private let logTrack: Int?
    private let pictures: PictureClock
    /// Writes a line to the session's timing log: its media time and reason.
    private let log: @Sendable (MediaTime?, String) -> Void

    private struct State {
        var stats = AudioCaptureStatistics()
        /// Where the appended sound ends, and in what format.
        var end: (time: MediaTime, format: AudioFormat)?
        /// The live thread's outcome, once it ended.
        var result: Result<Void, any Error>?
        /// Offline: the chunk read ahead of the pictures, and whether the source ended.
        var pending: CapturedAudio?
        var ended = false
    }
    private let state = Locked(State())

    /// Fade length at a pause's edges, so joining two stretches of sound does not click.
    static let pauseFade = 0.005
    /// After the pictures stop, how long audio captured before the end may still arrive.
    static let tailWait: Duration = .milliseconds(500)
    /// A live track shorter than the pictures by more than this at the end was cut short by
    /// its source (which stopped delivering), not by where its last buffer happened to end.
    static let shortfall = MediaTime(value: 1, timescale: 5)

    init(capture: AudioCapture, logTrack: Int?, pictures: PictureClock, log: @escaping @Sendable (MediaTime?, String) -> Void) {
        (self.capture, self.logTrack, self.pictures, self.log) = (capture, logTrack, pictures, log)
    }

    /// One runner per capture, each input's synchronisation events written to the log
    /// (sources mixed into one input share its handler: each event names its source).
    static func runners(for captures: [AudioCapture], pictures: PictureClock,
                        log: @escaping @Sendable (MediaTime?, String) -> Void) -> [AudioTrackRunner] {
        captures.enumerated().map { i, capture in
            var mixed: [Int: Int] = [:]
            for (j, other) in captures.enumerated() where other.input === capture.input { mixed[other.mixSource] = j }
            let sources = mixed, track = captures.count > 1 ? i : nil
            capture.input.audioSyncHandler = { event in
                let named = event.mixSource.flatMap { sources[$0] } ?? track
                log(MediaTime(value: Int64((event.trackTime * 1e6).rounded()), timescale: 1_000_000),
                    String(format: "%@ offset_ms=%.3f samples=%d ratio_ppm=%.0f",
                           event.kind.rawValue, event.offset * 1000, event.samples, event.ratio * 1e6) + (named.map { " track=\($0)" } ?? ""))
            }
            return AudioTrackRunner(capture: capture, logTrack: track, pictures: pictures, log: log)
        }
    }

    /// What the track did so far, the writer's synchronisation included.
    var statistics: AudioCaptureStatistics {
        var s = state[\.stats]
        s.sync = capture.input.audioSyncStatistics(mixSource: capture.mixSource)
        return s
    }

    /// Starts the live thread. It ends when the source ends, or once the pictures stopped
    /// (`PictureClock.end`) and the sound up to their end is in.
    func startLive() {
        let thread = Thread { [self] in
            let result = Result { try liveLoop() }
            state.withLockNotifying { $0.result = result }
        }
        thread.name = "swift-record.audio"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    private func liveLoop() throws {
        var fadeInNext = false
        var lastPauseSeen: Range<Int64>?
        while true {
            guard let chunk = try capture.source.nextChunk() else {
                if let reason = capture.source.endReason {
                    state.withLock { $0.stats.endedEarly = reason }
                    log(nil, logTrack.map { "audio-ended track=\($0)" } ?? "audio-ended")
                }
                return
            }
            if chunk.followsGap { state.withLock { $0.stats.sourceGaps += 1 } }
            // Wait for frame 0: the output clock starts at its capture. (Sound from before
            // it is cut by the writer: the session starts at 0.)
            guard let clock = pictures.waitForFirstPicture(untilNanoseconds: MonotonicClock.nanoseconds() + 2_000_000_000) else { continue }
            var samples = chunk.samples
            let rate = Double(samples.format.sampleRate)
            let hostNs = samples.presentationTimeStamp.convertScale(1_000_000_000).value
            let lengthNs = Int64(Double(samples.frameCount) / rate * 1e9)
            // Cut what was captured while paused.
            if let pausedAt = clock.pausedSinceNs, hostNs + lengthNs > pausedAt {
                let keep = max(0, Int(Double(pausedAt - hostNs) / 1e9 * rate))
                state.withLock { $0.stats.droppedPaused += 1 }
                fadeInNext = true
                if keep == 0 { continue }
                samples = samples.slice(0..<keep).faded(in: false, seconds: AudioTrackRunner.pauseFade)
            }
            if let pause = clock.lastPause, pause != lastPauseSeen {
                lastPauseSeen = pause
                fadeInNext = true
                if hostNs < pause.upperBound {
                    let skip = min(samples.frameCount, Int((Double(pause.upperBound - hostNs) / 1e9 * rate).rounded(.up)))
                    if skip > 0 { state.withLock { $0.stats.droppedPaused += 1 } }
                    if skip >= samples.frameCount { continue }
                    samples = samples.slice(skip..<samples.frameCount)
                }
            }
            if fadeInNext {
                samples = samples.faded(in: true, seconds: AudioTrackRunner.pauseFade)
                fadeInNext = false
            }
            let startNs = samples.presentationTimeStamp.convertScale(1_000_000_000).value
            guard let outNs = clock.outputNanoseconds(atHost: startNs) else { continue }
            let pts = MediaTime(value: outNs, timescale: 1_000_000_000)
            if let end = pictures.end, pts >= end { return }
            try capture.input.append(CapturedAudio(samples: samples, followsGap: chunk.followsGap), at: pts, mixSource: capture.mixSource)
            counted(samples, at: pts)
        }
    }

    /// The pictures ended (`PictureClock.end` is set): lets the sound captured before then
    /// in until `tailDeadline`, then interrupts the source and waits for the thread (up to
    /// `grace`). Returns its error, if it failed.
    func finishLive(tailDeadline: Int64, grace: Duration) -> (any Error)? {
        var result = state.wait(untilNanoseconds: tailDeadline) { $0.result }
        if result == nil {
            capture.source.interrupt()
            result = state.wait(untilNanoseconds: MonotonicClock.deadline(after: grace)) { $0.result }
        }
        if case .failure(let error)? = result { return error }
        return nil
    }

    /// A requested track is never absent or short (the article "Nothing is lost"): when the
    /// source ended early (its device went away, its program exited), or delivered nothing
    /// for the end of the recording (a frozen server, a program that never played), its
    /// track goes on in silence to `end`, as long as the pictures, counted and its reason
    /// kept in `endedEarly`.
    func fillWithSilence(until end: MediaTime) {
        let (endedEarly, from) = state.withLock { s in (s.stats.endedEarly != nil, s.end) }
        let start = from?.time ?? .zero
        guard endedEarly || end - start > AudioTrackRunner.shortfall else { return }
        if !endedEarly {
            let reason = from == nil ? "the source delivered no sound"
                : String(format: "the source delivered nothing for the last %.1f s", (end - start).seconds)
            state.withLock { $0.stats.endedEarly = reason }
        }
        let format = from?.format ?? capture.source.format
        let rate = Int32(clamping: format.sampleRate)
        var time = start
        var filled = 0.0
        while time < end {
            let frames = Int(min((end - time).convertScale(rate, rounding: .up).value, Int64(format.sampleRate)))
            let silence = AudioSampleBuffer.silence(format: format, frameCount: frames, at: time)
            guard frames > 0,
                  (try? capture.input.append(CapturedAudio(samples: silence, followsGap: false), at: time, mixSource: capture.mixSource)) != nil else { break }
            time = time + MediaTime(value: Int64(frames), timescale: rate)
            filled += Double(frames) / Double(format.sampleRate)
        }
        let seconds = filled
        state.withLock { $0.stats.silenceFilledSeconds = seconds }
    }

    /// Offline: appends the source's sound up to `time` (output time), as the pictures reach
    /// it, so the tracks stay interleaved in the file.
    func appendOffline(upTo time: MediaTime) throws {
        var (pending, ended) = state.withLock { ($0.pending, $0.ended) }
        defer { state.withLock { [pending, ended] s in (s.pending, s.ended) = (pending, ended) } }
        while !ended {
            if pending == nil { pending = try capture.source.nextChunk() }
            guard let chunk = pending else {
                ended = true
                return
            }
            if chunk.samples.presentationTimeStamp >= time { return }
            pending = nil
            try capture.input.append(chunk, at: chunk.samples.presentationTimeStamp, mixSource: capture.mixSource)
            counted(chunk.samples, at: chunk.samples.presentationTimeStamp)
        }
    }

    private func counted(_ samples: AudioSampleBuffer, at time: MediaTime) {
        let seconds = Double(samples.frameCount) / Double(samples.format.sampleRate)
        let end = time + MediaTime(value: Int64(samples.frameCount), timescale: Int32(clamping: samples.format.sampleRate))
        state.withLock { s in
            s.stats.buffers += 1
            s.stats.seconds += seconds
            s.end = (end, samples.format)
        }
    }
}
