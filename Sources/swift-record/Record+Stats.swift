import Foundation
import SwiftRecord

extension Record {
    /// The `--stats-json` document.
    func statsData(stats: CaptureStatistics, framesInFile: Int, bytes: Int64, output: String, plan: RecordingPlan, source: String,
                   settings: VideoSettings, replays: ReplaySaves.Counts?, audioSources: [OpenedAudio] = [],
                   overlay: OverlayStatistics? = nil) -> Data {
        var object: [String: Any] = [
            "version": SwiftRecordVersion.string, "output": output, "source": source, "codec": settings.codec.rawValue,
            "width": settings.width, "height": settings.height, "fps": plan.frameRate.description,
            "framesWritten": stats.framesWritten, "framesInFile": framesInFile, "framesDropped": stats.framesDropped, "ticksMissed": stats.ticksMissed,
            "framesCaptured": stats.framesCaptured, "framesRepeated": stats.framesRepeated, "ticksUnchanged": stats.ticksUnchanged,
            "ticksFilled": stats.ticksFilled, "ticksInGaps": stats.ticksInGaps,
            "framesDroppedEarly": stats.framesDroppedEarly, "framesDroppedPaused": stats.framesDroppedPaused,
            "pauses": stats.pauses, "pausedSeconds": stats.pausedSeconds,
            "elapsedSeconds": stats.elapsedSeconds, "mediaSeconds": stats.mediaSeconds, "outputBytes": bytes,
            "pixelBufferAllocations": stats.pixelBufferAllocations,
            "averageBitRate": stats.mediaSeconds > 0 ? Double(bytes) * 8 / stats.mediaSeconds : 0,
        ]
        if !plan.outputs.live.isEmpty { object["liveOutputs"] = LiveOutputReport.json(plan.outputs.live) }
        if let replays {
            object["replaySaved"] = replays.saved
            object["replayFailed"] = replays.failed
        }
        if let grabs = stats.grabs, let data = try? JSONEncoder().encode(grabs),
           let json = try? JSONSerialization.jsonObject(with: data) {
            object["grabs"] = json
        }
        if let audio = stats.audio, let data = try? JSONEncoder().encode(audio),
           let json = try? JSONSerialization.jsonObject(with: data) {
            object["audio"] = json
        }
        if !stats.audioTracks.isEmpty, let data = try? JSONEncoder().encode(stats.audioTracks),
           var sources = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] {
            // Each source's figures with its title; with --audio-mix, one track holding them
            // all, each with its volume.
            for i in sources.indices where i < audioSources.count {
                sources[i]["title"] = audioSources[i].title
                if sound.audioMix { sources[i]["volume"] = audioSources[i].volume }
            }
            object["audioTracks"] = sound.audioMix ? [["title": AudioOptions.mixTitle, "mixed": true, "sources": sources]] : sources
        }
        if !stats.videoTracks.isEmpty, let data = try? JSONEncoder().encode(stats.videoTracks),
           let json = try? JSONSerialization.jsonObject(with: data) {
            object["videoTracks"] = json
        }
        if let overlay, let data = try? JSONEncoder().encode(overlay), let json = try? JSONSerialization.jsonObject(with: data) {
            object["overlay"] = json
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }

    /// The closing line: what was written, and what happened on the way. The audio's
    /// length is the audio track's in the file, as a reader finds it (not what was captured).
    func summary(_ stats: CaptureStatistics, output outputPath: String, bytes: Int64) -> String {
        var extra = "\(stats.framesDropped) dropped"
        if !stats.audioTracks.isEmpty {
            let lengths = MediaFileReader.audioTracksSeconds(path: outputPath) ?? []
            let corrections = stats.audioTracks.reduce(0) { $0 + $1.sync.silenceInsertions + $1.sync.dropEvents }
            let tracks = sound.audioMix ? 1 : stats.audioTracks.count
            let seconds = (0..<tracks).map { String(format: "%.1f", $0 < lengths.count ? lengths[$0] : 0) }
            extra += String(format: ", audio %@ s, %d correction%@", seconds.joined(separator: " + "), corrections, corrections == 1 ? "" : "s")
        }
        if stats.framesRepeated > 0 { extra += ", \(stats.framesRepeated) repeated" }
        if stats.ticksFilled > 0 { extra += ", \(stats.ticksFilled) filled after a stall" }
        if stats.ticksInGaps > 0 { extra += ", \(stats.ticksInGaps) ticks left as a gap" }
        if stats.ticksUnchanged > 0 { extra += ", \(stats.ticksUnchanged) unchanged ticks left out" }
        if stats.pauses > 0 { extra += String(format: ", paused %d× for %.1f s", stats.pauses, stats.pausedSeconds) }
        return String(format: "swift-record: wrote %@: %d frames, %.3f s, %@ (%@)",
                      outputPath, stats.framesWritten, stats.mediaSeconds, formatBytes(bytes), extra)
    }
}
