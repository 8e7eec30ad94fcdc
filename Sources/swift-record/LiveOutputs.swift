import ArgumentParser
import Foundation
import SwiftRecord

/// The `-o` values of a recording: one file (the default name when none is given) and any
/// number of live outputs (`rtmp://…`, `srt://…`, `….m3u8`), all fed from one encode.
struct OutputPlan {
    let file: String
    let fileWasGiven: Bool
    let live: [LiveOutput]

    init(_ values: [String], hlsFragmentedMP4: Bool, hlsListSize: Int = 0, overwrite: Bool, defaultFile: () -> String) throws {
        var files: [String] = []
        var live: [LiveOutput] = []
        for value in values {
            let url = value.contains("://") ? URL(string: value) : URL(fileURLWithPath: value)
            guard let url else {
                throw ValidationError("--output '\(value)' is not a valid URL; expected e.g. rtmp://host/app/key or srt://host:port")
            }
            if LiveOutput.kind(of: url) != nil {
                let output: LiveOutput
                do { output = try LiveOutput(url: url) } catch { throw ValidationError("--output: \(error.message)") }
                output.usesFragmentedMP4Segments = hlsFragmentedMP4
                output.playlistLength = hlsListSize
                output.overwritesExistingFiles = overwrite
                live.append(output)
            } else if value.contains("://") && !value.hasPrefix("file://") {
                throw ValidationError("--output '\(LiveOutputReport.redacted(value))': unsupported protocol; expected a file, rtmp://, rtmps://, srt:// or a .m3u8 playlist")
            } else {
                guard FileType(pathExtension: url.pathExtension) != nil else {
                    throw ValidationError("--output '\(value)' has no known container extension; expected .mp4, .mov, .mkv or .webm (or .m3u8, rtmp://, srt:// for live outputs)")
                }
                // The path as given (a trailing slash, for one, is the file rule's to refuse).
                files.append(value.hasPrefix("file://") ? url.path : value)
            }
        }
        guard files.count <= 1 else {
            throw ValidationError("--output names \(files.count) files (\(files.joined(separator: ", "))); one file per recording, plus any number of rtmp://, srt:// or .m3u8 outputs")
        }
        let hls = live.filter { $0.kind == .hls }.map(\.url.path)
        if Set(hls).count != hls.count {
            throw ValidationError("--output names the same .m3u8 playlist twice")
        }
        // The names each playlist writes (segments, init segment) are checked against the
        // disk with the run's other files (`WrittenFiles`): a name that exists is a refusal
        // (exit 2), not a usage error.
        self.file = files.first ?? defaultFile()
        fileWasGiven = !files.isEmpty
        self.live = live
    }
}

/// How live outputs appear on the progress line, in the stats JSON and at the end.
enum LiveOutputReport {
    /// An argument with a possible RTMP stream key hidden, for error messages.
    static func redacted(_ value: String) -> String {
        URL(string: value).flatMap { try? LiveOutput(url: $0) }?.displayName ?? value
    }

    /// " | rtmp 120 ms, 3 dropped, 1 reconnect" per output, for the progress line.
    static func progress(_ outputs: [LiveOutput]) -> String {
        outputs.map { output in
            let s = output.statistics
            var text = "  | \(output.kind.rawValue) "
            switch output.status {
            case .streaming: text += "\(s.queuedMilliseconds) ms queued"
            case .reconnecting: text += "reconnecting"
            default: text += output.status.rawValue
            }
            if s.videoFramesDropped > 0 { text += ", \(s.videoFramesDropped) dropped" }
            if s.videoFramesLost > 0 { text += ", \(s.videoFramesLost) lost" }
            if s.reconnects > 0 { text += ", \(s.reconnects) reconnect\(s.reconnects == 1 ? "" : "s")" }
            return text
        }.joined()
    }

    /// The "liveOutputs" array of the stats JSON.
    static func json(_ outputs: [LiveOutput]) -> [[String: Any]] {
        outputs.map { output in
            var object: [String: Any] = ["url": output.displayName, "kind": output.kind.rawValue, "status": output.status.rawValue]
            if let data = try? JSONEncoder().encode(output.statistics),
               let figures = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                object.merge(figures) { a, _ in a }
            }
            if let error = output.error { object["error"] = error.message }
            return object
        }
    }

    /// Says which live outputs did not complete; true when all did.
    static func reportEnd(_ outputs: [LiveOutput], quiet: Bool) -> Bool {
        var allCompleted = true
        for output in outputs {
            let s = output.statistics
            if output.status == .completed {
                if !quiet {
                    note("swift-record: streamed to \(output.displayName): \(s.videoFramesSent) frames, \(formatBytes(s.bytesSent))"
                         + ", \(s.videoFramesDropped) dropped, \(s.reconnects) reconnect\(s.reconnects == 1 ? "" : "s")"
                         + String(format: " (%.1f s offline)", s.outageSeconds))
                }
            } else {
                allCompleted = false
                note("swift-record: the live output \(output.displayName) did not complete: \(output.error?.userMessage ?? output.status.rawValue)")
            }
        }
        return allCompleted
    }
}
