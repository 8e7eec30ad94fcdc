import Foundation

/// An audio source recorded beside a capture session's pictures, into an audio input of
/// the same writer.
public struct AudioCapture: Sendable {
    public let source: any AudioCaptureSource
    public let input: AssetWriterInput

    public init(source: any AudioCaptureSource, input: AssetWriterInput) {
        self.source = source
        self.input = input
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
    public init() {}
}

extension CaptureSession {
    /// Fade length at a pause's edges, so joining two stretches of sound does not click.
    static let pauseFade = 0.005
    /// After the pictures stop, how long audio captured before the end may still arrive.
    static let audioTailWait: Duration = .milliseconds(500)

    /// The live audio loop, on a thread of its own: every buffer the source delivers is
    /// placed on the pictures' output clock (pauses taken out, faded at their edges) and
    /// appended. Ends when the source ends, or once the pictures stopped and the audio up
    /// to their end is in.
    func liveAudioLoop(_ audio: AudioCapture) throws {
        var fadeInNext = false
        var lastPauseSeen: Range<Int64>?
        while true {
            guard let chunk = try audio.source.nextChunk() else {
                if let reason = audio.source.endReason {
                    state.withLock { $0.audio.endedEarly = reason }
                    timingLog?.record(frame: nil, presentationTime: nil, captureTime: nil,
                                      hostTime: hostSeconds(), reason: "audio-ended")
                }
                return
            }
            if chunk.followsGap { state.withLock { $0.audio.sourceGaps += 1 } }
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
                state.withLock { $0.audio.droppedPaused += 1 }
                if keep == 0 { fadeInNext = true; continue }
                samples = samples.slice(0..<keep).faded(in: false, seconds: CaptureSession.pauseFade)
                fadeInNext = true
            }
            if let pause = clock.lastPause, pause != lastPauseSeen {
                lastPauseSeen = pause
                fadeInNext = true
                if hostNs < pause.upperBound {
                    let skip = min(samples.frameCount, Int((Double(pause.upperBound - hostNs) / 1e9 * rate).rounded(.up)))
                    if skip > 0 { state.withLock { $0.audio.droppedPaused += 1 } }
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
            try audio.input.append(CapturedAudio(samples: samples, followsGap: chunk.followsGap), at: pts)
            counted(samples)
        }
    }

    /// Runs the live audio loop on a thread of its own; `join` waits for it.
    func startAudioThread(_ audio: AudioCapture) -> Locked<Result<Void, any Error>?> {
        let done = Locked<Result<Void, any Error>?>(nil)
        let thread = Thread { [self] in
            let result: Result<Void, any Error>
            do { try liveAudioLoop(audio); result = .success(()) } catch { result = .failure(error) }
            done.withLockNotifying { $0 = result }
        }
        thread.name = "swift-record.audio"
        thread.qualityOfService = .userInteractive
        thread.start()
        return done
    }

    /// The pictures ended at `end`: lets the audio captured before it in, then stops the
    /// source and waits for the audio thread. Returns its error, if it failed.
    func finishLiveAudio(_ audio: AudioCapture, thread done: Locked<Result<Void, any Error>?>, end: MediaTime) -> (any Error)? {
        state.withLock { $0.audioStop = end }
        let tail = MonotonicClock.nanoseconds() + Int64(CaptureSession.audioTailWait.seconds * 1e9)
        var result = done.wait(untilNanoseconds: tail) { $0 }
        if result == nil {
            audio.source.interrupt()
            result = done.wait(untilNanoseconds: MonotonicClock.nanoseconds() + Int64(CaptureSession.stopGrace.seconds * 1e9)) { $0 }
        }
        if case .failure(let error)? = result { return error }
        return nil
    }

    /// Offline: appends the source's audio up to `time` (output time), as the pictures
    /// reach it, so the two tracks stay interleaved in the file.
    func appendOfflineAudio(_ audio: AudioCapture, upTo time: MediaTime, pending: inout CapturedAudio?, ended: inout Bool) throws {
        while !ended {
            if pending == nil { pending = try audio.source.nextChunk() }
            guard let chunk = pending else {
                ended = true
                return
            }
            if chunk.samples.presentationTimeStamp >= time { return }
            pending = nil
            try audio.input.append(chunk, at: chunk.samples.presentationTimeStamp)
            counted(chunk.samples)
        }
    }

    private func counted(_ samples: AudioSampleBuffer) {
        let seconds = Double(samples.frameCount) / Double(samples.format.sampleRate)
        state.withLock { s in
            s.audio.buffers += 1
            s.audio.seconds += seconds
        }
    }

    func hostSeconds() -> Double {
        guard let t0 = state.withLock({ $0.startedAt }) else { return 0 }
        return (clock.now() - t0).seconds
    }

    /// Writes the audio track's corrections to the timing log.
    func logAudioSync(_ event: AudioSyncEvent) {
        timingLog?.record(frame: nil, presentationTime: MediaTime(value: Int64((event.trackTime * 1e6).rounded()), timescale: 1_000_000),
                          captureTime: nil, hostTime: hostSeconds(),
                          reason: String(format: "%@ offset_ms=%.3f samples=%d ratio_ppm=%.0f",
                                         event.kind.rawValue, event.offset * 1000, event.samples, event.ratio * 1e6))
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
