/// An offline source (a file, the unpaced synthetic scene) read as fast as the encoder takes
/// its frames: frame n at n / rate, the sound appended as the pictures reach it. Pausing does
/// not apply to it.
struct OfflineCaptureLoop {
    let session: CaptureSession
    let pool: PixelBufferPool
    let origin: MediaTime

    func run() async throws {
        let s = session
        let input = s.adaptor.assetWriterInput
        let timing = s.timing
        var gate = timing.gate
        var n: Int64 = 0
        var stats = CaptureStatistics()
        while timing.frameLimit.map({ n < $0 }) ?? true, !s.pacer.isInterrupted {
            guard let frame = try s.source.nextFrame(from: pool) else { break }
            let pts = s.presentationTime(ofFrame: n)
            for track in s.audioTracks { try track.appendOffline(upTo: s.presentationTime(ofFrame: n + 1)) }
            let host = (s.clock.now() - origin).seconds
            if gate?.admits(tick: n, unchanged: frame.isUnchanged, encoded: input.encodedSampleCount) ?? true {
                try await s.adaptor.append(frame.pixelBuffer, withPresentationTime: pts)
                for track in s.videoTracks { track.frameWritten(at: pts) }
                gate?.wrote(tick: n, unchanged: frame.isUnchanged, appended: input.appendedSampleCount)
                s.timingLog?.record(frame: n, presentationTime: pts, captureTime: frame.captureTime.seconds, hostTime: host, reason: "captured")
                stats.framesWritten += 1
                stats.framesCaptured += 1
            } else {
                stats.ticksUnchanged += 1
                s.timingLog?.record(frame: n, presentationTime: pts, captureTime: frame.captureTime.seconds, hostTime: host, reason: "unchanged")
            }
            n += 1
            stats.mediaSeconds = s.presentationTime(ofFrame: n).seconds
            let (published, end) = (stats, n)
            s.state.withLock { state in
                state.stats = published
                state.endTick = end
            }
        }
        if !s.audioCaptures.isEmpty || gate != nil, n > 0 { try s.writer.endSession(atSourceTime: s.presentationTime(ofFrame: n)) }
    }
}
