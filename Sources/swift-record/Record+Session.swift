import Foundation
import SwiftRecord
import SwiftRecordBroadcast
#if canImport(Glibc)
import Glibc
#endif

/// How the session ended, for `Record.report`.
struct RecordingOutcome {
    /// What stopped the recording, or finishing the file, if anything went wrong.
    let failure: Error?
    let statistics: CaptureStatistics
    let replays: ReplaySaves.Counts?
    /// The output's directory, watched from before the writer started (moved, removed, or in place).
    let directory: OutputDirectoryWatch
    let output: String
}

extension Record {
    /// Runs the capture session to its end with the signals, terminal commands and progress
    /// line attached, then finishes the file (and waits for replay clips being saved).
    func record(_ plan: RecordingPlan, _ started: StartedWriter, sources: OpenedSources, files: WrittenFiles, output: String,
                directory: OutputDirectoryWatch, control: RecordingControl, signals: SignalWatcher) async throws(RecordExit) -> RecordingOutcome {
        let writer = started.writer, log = started.timingLog
        let audioInputs = writer.inputs.filter { $0.mediaType == .audio }
        let audio = sound.audioMix
            ? audioInputs.first.map { mix in sources.audio.enumerated().map { AudioCapture(source: $1.source, input: mix, mixSource: $0) } } ?? []
            : zip(sources.audio, audioInputs).map { AudioCapture(source: $0.source, input: $1) }
        let session = CaptureSession(source: sources.capture, writer: writer, adaptor: started.adaptor, frameRate: plan.frameRate,
                                     limit: plan.limit, timingLog: log, audioCaptures: audio,
                                     videoCaptures: zip([sources.cameraTrack].compactMap { $0 }, [started.cameraAdaptor].compactMap { $0 }).map(VideoTrackCapture.init),
                                     frameRateMode: started.frameRateMode)
        session.simulatedSourceStall = simulateSourceStall.map { ($0.frame, .milliseconds($0.milliseconds)) } // FAULT-INJECTION
        let live = sources.capture.isLive
        // A broadcast sender's pauses pause the recording (no gap in the file).
        (sources.capture as? BroadcastSource)?.onSenderPause { paused in
            if paused { session.pause() } else { session.resume() }
            if !quiet { note(paused ? "swift-record: the sender paused" : "swift-record: the sender resumed") }
        }
        let replays = ReplaySaves(writer.replayBuffers.first, besideOutput: output)
        var saveReplay: (@Sendable () -> Void)?
        if let replays {
            // Paused: what the encoder still held of the time before the pause goes in too.
            saveReplay = { replays.save(after: { _ = session.waitUntilPauseIsWritten(timeout: .seconds(5)) }) }
        }
        let attached = control.attach(RecordingControl.Actions(
            stop: { session.stop() },
            togglePause: { live ? session.togglePause() : nil },
            saveReplay: saveReplay))
        if !attached {
            try checkStartUp(control) {
                writer.cancelWriting()
                log?.discard()
            }
        }
        let commands = TerminalCommands.startIfInteractive { command in
            switch command {
            case .stop:
                session.stop()
                note("swift-record: stopping: finishing the file")
            case .togglePause:
                guard live else {
                    note("swift-record: pausing applies to live sources only")
                    return
                }
                note(session.togglePause() ? "swift-record: paused (p + Enter resumes)" : "swift-record: resumed")
            case .saveReplay:
                control.saveReplay()
            }
        }
        if commands && !quiet {
            note("swift-record: p + Enter pauses and resumes, q + Enter stops")
        }
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1) {
            progressText(session.statistics, bytes: fileSize(files.output.writingPath), live: plan.outputs.live)
        }
        var failure: Error?
        do {
            _ = try await session.run()
        } catch {
            failure = error
        }
        progress.stop()
        signals.cancel()
        do {
            try await writer.finishWriting()
        } catch {
            if failure == nil { failure = error }
        }
        return RecordingOutcome(failure: failure, statistics: session.statistics, replays: replays?.waitUntilDone(),
                                directory: directory, output: output)
    }

    /// The progress line: time, frames, rate, drops and repeats, size and bit rate, sound,
    /// pause, and each live output.
    private func progressText(_ s: CaptureStatistics, bytes: Int64, live: [LiveOutput]) -> String {
        let rate = s.mediaSeconds > 0 ? Double(bytes) * 8 / s.mediaSeconds : 0
        let sound = s.audio.map { a in
            String(format: "  audio %.1f s (sync %+.1f ms)", a.seconds, a.sync.lastOffsetSeconds * 1000)
        } ?? ""
        return String(format: "%@  frames %d  fps %.1f  dropped %d  repeated %d  %@  %@%@%@",
                      formatClock(s.mediaSeconds), s.framesWritten,
                      s.elapsedSeconds > 0 ? Double(s.framesWritten) / s.elapsedSeconds : 0,
                      s.framesDropped, s.framesRepeated, formatBytes(bytes), formatBitRate(rate), sound,
                      s.isPaused ? "  [paused]" : "") + LiveOutputReport.progress(live)
    }
}
