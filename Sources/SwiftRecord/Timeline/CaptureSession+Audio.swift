import Foundation

/// An audio source recorded beside a capture session's pictures, into an audio input of
/// the same writer: a track of its own, or one source of an input that mixes several
/// (`AssetWriterInput.mixVolumes`; several captures then share the input, each with its
/// own `mixSource`).
public struct AudioCapture: Sendable {
    public let source: any AudioCaptureSource
    public let input: AssetWriterInput
    /// Which of the input's mixed sources this is (its index in `mixVolumes`); 0 for an
    /// input of one source.
    public let mixSource: Int

    public init(source: any AudioCaptureSource, input: AssetWriterInput, mixSource: Int = 0) {
        self.source = source
        self.input = input
        self.mixSource = mixSource
    }
}

/// What the session's audio did.
public struct AudioCaptureStatistics: Sendable, Codable, Equatable {
    /// Buffers handed to the writer and the seconds of sound in them.
    public var buffers = 0
    public var seconds = 0.0
    /// Times the source reported lost samples (an overrun, a suspended device).
    public var sourceGaps = 0
    /// Buffers (or parts) dropped because they were captured while paused.
    public var droppedPaused = 0
    /// Why the audio ended before the recording did (the device went away), if it did.
    public var endedEarly: String?
    /// The writer's synchronisation: offsets measured and corrections made.
    public var sync = AudioSyncStatistics()
    /// Seconds of silence added after the source ended early, so the track lasts as long
    /// as the pictures.
    public var silenceFilledSeconds = 0.0
    public init() {}
}

extension CaptureSession {
    /// Fade length at a pause's edges, so joining two stretches of sound does not click.
    static let pauseFade = 0.005
    /// After the pictures stop, how long audio captured before the end may still arrive.
    static let audioTailWait: Duration = .milliseconds(500)

    /// The live audio loop of sound source `track`, on a thread of its own: every buffer
    /// the source delivers is placed on the pictures' output clock (pauses taken out, faded
    /// at their edges) and appended to its input. Ends when the source ends, or once the
    /// pictures stopped and the audio up to their end is in.
    func liveAudioLoop(track: Int) throws {
        let audio = audioCaptures[track]
        var fadeInNext = false
        var lastPauseSeen: Range<Int64>?
        while true {
            guard let chunk = try audio.source.nextChunk() else {
                if let reason = audio.source.endReason {
                    state.withLock { $0.audioTracks[track].endedEarly = reason }
                    timingLog?.record(frame: nil, presentationTime: nil, captureTime: nil,
                                      hostTime: hostSeconds(), reason: audioCaptures.count > 1 ? "audio-ended track=\(track)" : "audio-ended")
                }
                return
            }
            if chunk.followsGap { state.withLock { $0.audioTracks[track].sourceGaps += 1 } }
            // Wait for frame 0: the output clock starts at its capture. (Sound from before
            // it is cut by the writer: the session starts at 0.)
            let clock = state.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 2_000_000_000) { s -> SessionTimeline.OutputClock? in
                if let c = s.outputClock, c.originNs != nil { return c }
                return nil
            }
            guard let clock else { continue }
            var samples = chunk.samples
            let rate = Double(samples.format.sampleRate)
            let hostNs = samples.presentationTimeStamp.convertScale(1_000_000_000).value
            let lengthNs = Int64(Double(samples.frameCount) / rate * 1e9)
            // Cut what was captured while paused.
            if let pausedAt = clock.pausedSinceNs, hostNs + lengthNs > pausedAt {
                let keep = max(0, Int(Double(pausedAt - hostNs) / 1e9 * rate))
                state.withLock { $0.audioTracks[track].droppedPaused += 1 }
                if keep == 0 { fadeInNext = true; continue }
                samples = samples.slice(0..<keep).faded(in: false, seconds: CaptureSession.pauseFade)
                fadeInNext = true
            }
            if let pause = clock.lastPause, pause != lastPauseSeen {
                lastPauseSeen = pause
                fadeInNext = true
                if hostNs < pause.upperBound {
                    let skip = min(samples.frameCount, Int((Double(pause.upperBound - hostNs) / 1e9 * rate).rounded(.up)))
                    if skip > 0 { state.withLock { $0.audioTracks[track].droppedPaused += 1 } }
                    if skip >= samples.frameCount { continue }
                    samples = samples.slice(skip..<samples.frameCount)
                }
            }
            if fadeInNext {
                samples = samples.faded(in: true, seconds: CaptureSession.pauseFade)
                fadeInNext = false
            }
            let startNs = samples.presentationTimeStamp.convertScale(1_000_000_000).value
            guard let outNs = clock.outputNanoseconds(atHost: startNs) else { continue }
            let pts = MediaTime(value: outNs, timescale: 1_000_000_000)
            if let end = state.withLock({ $0.audioStop }), pts >= end { return }
            try audio.input.append(CapturedAudio(samples: samples, followsGap: chunk.followsGap), at: pts, mixSource: audio.mixSource)
            counted(samples, at: pts, track: track)
        }
    }

    /// Runs sound source `track`'s live audio loop on a thread of its own.
    func startAudioThread(track: Int) -> Locked<Result<Void, any Error>?> {
        let done = Locked<Result<Void, any Error>?>(nil)
        let thread = Thread { [self] in
            let result: Result<Void, any Error>
            do { try liveAudioLoop(track: track); result = .success(()) } catch { result = .failure(error) }
            done.withLockNotifying { $0 = result }
        }
        thread.name = "swift-record.audio"
        thread.qualityOfService = .userInteractive
        thread.start()
        return done
    }

    /// The pictures ended (`audioStop` is set): lets source `track`'s audio captured before
    /// then in until `tailDeadline`, then interrupts the source and waits for its thread.
    /// Returns its error, if it failed.
    func finishLiveAudio(track: Int, thread done: Locked<Result<Void, any Error>?>, tailDeadline: Int64) -> (any Error)? {
        var result = done.wait(untilNanoseconds: tailDeadline) { $0 }
        if result == nil {
            audioCaptures[track].source.interrupt()
            result = done.wait(untilNanoseconds: MonotonicClock.nanoseconds() + Int64(CaptureSession.stopGrace.seconds * 1e9)) { $0 }
        }
        if case .failure(let error)? = result { return error }
        return nil
    }

    /// A live track shorter than the pictures by more than this at the end was cut short by
    /// its source (which stopped delivering), not by where its last buffer happened to end.
    static let audioShortfall = MediaTime(value: 1, timescale: 5)

    /// A requested track is never absent or short (README and the article "Nothing is lost"): when source
    /// `track` ended early (its device went away, its program exited), or delivered nothing
    /// for the end of the recording (a frozen server, a program that never played, a
    /// buffer not yet filled), its track goes on in silence to `end`, as long as the
    /// pictures, counted and its reason kept in `endedEarly`.
    func fillWithSilence(track: Int, until end: MediaTime) {
        let (endedEarly, from) = state.withLock { s in (s.audioTracks[track].endedEarly != nil, s.audioEnds[track]) }
        let start = from?.time ?? .zero
        guard endedEarly || end - start > CaptureSession.audioShortfall else { return }
        if !endedEarly {
            let reason = from == nil ? "the source delivered no sound"
                : String(format: "the source delivered nothing for the last %.1f s", (end - start).seconds)
            state.withLock { $0.audioTracks[track].endedEarly = reason }
        }
        let audio = audioCaptures[track]
        let format = from?.format ?? audio.source.format
        let rate = Int32(clamping: format.sampleRate)
        var time = from?.time ?? .zero
        var filled = 0.0
        while time < end {
            let frames = Int(min((end - time).convertScale(rate, rounding: .up).value, Int64(format.sampleRate)))
            let silence = AudioSampleBuffer.silence(format: format, frameCount: frames, at: time)
            guard frames > 0,
                  (try? audio.input.append(CapturedAudio(samples: silence, followsGap: false), at: time, mixSource: audio.mixSource)) != nil else { break }
            time = time + MediaTime(value: Int64(frames), timescale: rate)
            filled += Double(frames) / Double(format.sampleRate)
        }
        let seconds = filled
        state.withLock { $0.audioTracks[track].silenceFilledSeconds = seconds }
    }

    /// Offline: appends source `track`'s audio up to `time` (output time), as the pictures
    /// reach it, so the tracks stay interleaved in the file.
    func appendOfflineAudio(track: Int, upTo time: MediaTime, pending: inout CapturedAudio?, ended: inout Bool) throws {
        let audio = audioCaptures[track]
        while !ended {
            if pending == nil { pending = try audio.source.nextChunk() }
            guard let chunk = pending else {
                ended = true
                return
            }
            if chunk.samples.presentationTimeStamp >= time { return }
            pending = nil
            try audio.input.append(chunk, at: chunk.samples.presentationTimeStamp, mixSource: audio.mixSource)
            counted(chunk.samples, at: chunk.samples.presentationTimeStamp, track: track)
        }
    }

    private func counted(_ samples: AudioSampleBuffer, at time: MediaTime, track: Int) {
        let seconds = Double(samples.frameCount) / Double(samples.format.sampleRate)
        let end = time + MediaTime(value: Int64(samples.frameCount), timescale: Int32(clamping: samples.format.sampleRate))
        state.withLock { s in
            s.audioTracks[track].buffers += 1
            s.audioTracks[track].seconds += seconds
            s.audioEnds[track] = (end, samples.format)
        }
    }

    func hostSeconds() -> Double {
        guard let t0 = state.withLock({ $0.startedAt }) else { return 0 }
        return (clock.now() - t0).seconds
    }

    /// Writes an audio track's corrections to the timing log (`track` named when the
    /// session has several).
    func logAudioSync(_ event: AudioSyncEvent, track: Int?) {
        timingLog?.record(frame: nil, presentationTime: MediaTime(value: Int64((event.trackTime * 1e6).rounded()), timescale: 1_000_000),
                          captureTime: nil, hostTime: hostSeconds(),
                          reason: String(format: "%@ offset_ms=%.3f samples=%d ratio_ppm=%.0f",
                                         event.kind.rawValue, event.offset * 1000, event.samples, event.ratio * 1e6)
                            + (track.map { " track=\($0)" } ?? ""))
    }
}

extension AudioSampleBuffer {
    /// The same samples with a linear fade in (or out) over the first (last) `seconds`.
    func faded(in fadeIn: Bool, seconds: Double) -> AudioSampleBuffer {
        let n = min(frameCount, max(1, Int(seconds * Double(format.sampleRate))))
        let channelsPerPlane = format.isPlanar ? 1 : format.channelCount
        let bytes = format.sampleType.bytesPerSample
        let planes = self.planes.map { plane -> [UInt8] in
            var p = plane
            p.withUnsafeMutableBytes { raw in
                for k in 0..<n {
                    let frame = fadeIn ? k : frameCount - 1 - k
                    let gain = Double(k) / Double(n)
                    for c in 0..<channelsPerPlane {
                        let offset = (frame * channelsPerPlane + c) * bytes
                        switch format.sampleType {
                        case .s16:
                            let v = raw.load(fromByteOffset: offset, as: Int16.self)
                            raw.storeBytes(of: Int16(Double(v) * gain), toByteOffset: offset, as: Int16.self)
                        case .s32:
                            let v = raw.load(fromByteOffset: offset, as: Int32.self)
                            raw.storeBytes(of: Int32(Double(v) * gain), toByteOffset: offset, as: Int32.self)
                        case .f32:
                            let v = raw.load(fromByteOffset: offset, as: Float.self)
                            raw.storeBytes(of: Float(Double(v) * gain), toByteOffset: offset, as: Float.self)
                        }
                    }
                }
            }
            return p
        }
        return AudioSampleBuffer(format: format, frameCount: frameCount, presentationTimeStamp: presentationTimeStamp, planes: planes)
    }
}
