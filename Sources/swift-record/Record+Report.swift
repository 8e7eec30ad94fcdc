import ArgumentParser
import Foundation
import SwiftRecord

extension Record {
    /// Says how the recording ended and where it is, writes the stats JSON and finishes the
    /// timing log; ends the run with exit 1 (a `RecordExit` whose message was said) unless
    /// the file, the log, the stats, every replay clip and every live output are complete.
    func report(_ outcome: RecordingOutcome, plan: RecordingPlan, sources: OpenedSources, started: StartedWriter,
                files: WrittenFiles) throws(RecordExit) {
        let writer = started.writer, output = outcome.output, stats = outcome.statistics, directory = outcome.directory
        // Unfinished and replacing a file: what was written is in the partial file beside it.
        let partial = writer.outputFile.flatMap { $0.replacesExistingFile ? $0.writingPath : nil }
        let written = writer.status == .completed ? output : partial ?? output
        // Where the file is now: its directory may have been moved (the file with it) or removed.
        let whereabouts = directory.whereabouts()
        let kept = directory.currentPath(of: written)
        let directoryNote: String? = switch whereabouts {
        case .inPlace: nil
        case .removed: "the output directory \(directory.path) was removed while recording; the recording \(written) went with it and is lost"
        case .moved: "the output directory \(directory.path) was moved while recording; the recording is not at \(output) but at \(kept)"
            + (outputs.noFragments ? "" : " (its fragments as written; `swift-record repair` makes it an ordinary file)")
        }
        let bytes = fileSize(kept)
        let keptExists = whereabouts != .removed && FileIdentity(path: kept) != nil
        let failure = outcome.failure
        // What a reader of the file finds, counted in the file, not what was handed to the writer.
        let framesInFile = keptExists && (failure != nil || files.statsJSON != nil) ? MediaFileReader.videoFrameCount(path: kept) ?? 0 : 0
        var logFailure: SwiftRecordError?
        do { try started.timingLog?.finish() } catch { logFailure = error }
        if let statsFile = files.statsJSON {
            do {
                try statsFile.write(statsData(stats: stats, framesInFile: framesInFile, bytes: bytes, output: kept, plan: plan,
                                              source: sources.capture.identifier, settings: started.settings, replays: outcome.replays,
                                              audioSources: sources.audio, overlay: (sources.capture as? OverlaySource)?.overlayStatistics))
            } catch {
                if logFailure == nil { logFailure = error }
            }
        }
        let liveCompleted = LiveOutputReport.reportEnd(plan.outputs.live, quiet: quiet)
        if let directoryNote {
            if let failure { note("swift-record: recording stopped: \((failure as? SwiftRecordError)?.userMessage ?? "\(failure)")") }
            throw RecordExit(directoryNote, ExitStatus.failed)
        }
        if let failure {
            let text = (failure as? SwiftRecordError)?.userMessage ?? "\(failure)"
            // A stop before the first picture: said as a stop during start-up is.
            let stoppedEarly = (failure as? SwiftRecordError).flatMap { $0.kind == .cancelled ? $0.message : nil }
            note("swift-record: " + (stoppedEarly ?? "recording stopped: \(text)"))
            if keptExists && framesInFile > 0 {
                note("swift-record: kept what was recorded: \(kept) (\(framesInFile) frame\(framesInFile == 1 ? "" : "s") readable)")
            } else if keptExists {
                note("swift-record: nothing playable was kept: \(kept) holds no readable video"
                     + (outputs.noFragments ? " (with --no-fragments the index is written only at the end)" : ""))
            }
            throw RecordExit(nil, ExitStatus.failed)
        }
        if let logFailure {
            throw RecordExit("the recording is complete, but \(logFailure.userMessage)", ExitStatus.failed)
        }
        for (i, track) in stats.audioTracks.enumerated() {
            guard let ended = track.endedEarly else { continue }
            let name = sound.audioMix ? "audio source \(i + 1) (\(sources.audio[i].title)) of the mix"
                : stats.audioTracks.count > 1 ? "audio track \(i + 1) (\(sources.audio[i].title))" : "audio"
            note(String(format: "swift-record: the %@ ended early (%@) after %.1f s; %.1f s of silence fill it to the video's end",
                        name, ended, track.seconds, track.silenceFilledSeconds))
        }
        if !quiet { note(summary(stats, output: output, bytes: bytes)) }
        if let failed = outcome.replays?.failed, failed > 0 {
            throw RecordExit("the recording is complete, but \(failed) replay clip\(failed == 1 ? " was" : "s were") not saved (said above)", ExitStatus.failed)
        }
        if !liveCompleted { throw RecordExit(nil, ExitStatus.failed) }
    }
}
