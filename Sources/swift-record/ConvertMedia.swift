import ArgumentParser
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// `convert` of a media file (not raw video or Y4M): an `AssetReader` feeding an
/// `AssetWriter` through `MediaFileConverter`.
extension Convert {
    /// Extensions of raw video (any pixel-format name too): always today's raw path.
    static let rawExtensions: Set<String> = ["yuv", "y4m", "raw", "rgb", "bgr", "rgba", "bgra", "argb", "abgr", "gray", "grey", "nv12", "nv21", "yv12", "i420", "uyvy", "yuyv", "pcm"]
    /// Extensions that name a container: such an input is opened as media, and its errors are told as such.
    static let mediaExtensions: Set<String> = ["mkv", "mka", "webm", "mp4", "m4v", "m4a", "mov", "ts", "m2ts", "mts", "avi", "flv", "mpg", "mpeg", "ogv", "ogg", "nut", "3gp", "wmv", "asf"]

    /// Whether the input is a media file for `AssetReader` rather than raw video or Y4M:
    /// standard input, --size/--pix-fmt, a raw extension and a Y4M header keep the raw path;
    /// a container's extension, or a file FFmpeg recognises, is media.
    func isMediaInput() throws -> Bool {
        guard input != "-", size == nil, pixFmt == nil else { return false }
        let ext = URL(fileURLWithPath: input).pathExtension.lowercased()
        if Convert.rawExtensions.contains(ext) || (try? RawPixelFormat.parse(ext)) != nil { return false }
        if Convert.mediaExtensions.contains(ext) { return true }
        // Only a regular file is looked into: what is read from a pipe is gone.
        var st = stat()
        guard PathBytes.withCString(input, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        if let handle = FileHandle(forReadingAtPath: input) {
            let head = (try? handle.read(upToCount: 9)) ?? Data()
            try? handle.close()
            if head == Data("YUV4MPEG2".utf8) { return false }
        }
        return (try? AssetReader(path: input)) != nil
    }

    /// Options the raw path has and a media file does not take.
    func refuseRawOnlyOptions() throws {
        var given: [String] = []
        if fps != nil { given.append("--fps") }
        if lossless { given.append("--lossless") }
        if scale != nil { given.append("--scale") }
        if crop != nil { given.append("--crop") }
        if rotate != nil { given.append("--rotate") }
        if frames != nil { given.append("--frames") }
        if audio != nil { given.append("--audio") }
        if !given.isEmpty {
            note("swift-record convert: \(given.joined(separator: ", ")) \(given.count == 1 ? "is" : "are") for raw video and Y4M input; \(input) is a media file")
            throw ExitStatus.refused
        }
    }

    func runMedia() async throws {
        try refuseRawOnlyOptions()
        let options = MediaFileConverter.Options(
            input: input, output: output, copy: copy,
            codec: encoder.codec, rateControl: encoder.rateControl, preset: encoder.preset,
            keyFrameInterval: encoder.keyint, threads: encoder.threads == 0 ? nil : encoder.threads,
            audioCodec: audioCodec, audioBitRate: audioBitrate, overwrite: replace.overwrite, allowPartial: allowPartial)
        let converter: MediaFileConverter
        do {
            converter = try MediaFileConverter(options: options)
        } catch {
            note("swift-record convert: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        if !quiet { describe(converter) }
        let result = try await execute(cancel: converter.cancel, progress: {
            let n = converter.framesWritten, t = converter.elapsedSeconds
            return String(format: "%d frames  %.1f fps  %@", n, t > 0 ? Double(n) / t : 0, formatClock(t))
        }, keptPath: { converter.keptFilePath }, keptNote: { "kept what was written: \($0)\(allowPartial ? " (--allow-partial)" : "")" }) { () throws(SwiftRecordError) in
            try await converter.run()
        }
        if result.stoppedEarly {
            note("swift-record convert: stopped after \(result.framesWritten) frames; kept \(result.outputPath) (--allow-partial)")
            throw ExitStatus.interrupted
        }
        if result.subtitlesBeforeStart > 0 {
            let n = result.subtitlesBeforeStart
            note("swift-record convert: warning: \(n) subtitle\(n == 1 ? "" : "s") shown before the first picture or sound left out (the output starts there)")
        }
        if !quiet {
            note(String(format: "swift-record: wrote %@: %d frames, %.3f s, %@ in %.2f s", result.outputPath, result.framesWritten,
                        result.duration.seconds, formatBytes(result.outputBytes), result.elapsedSeconds))
        }
        let omitted = converter.omittedStreams
        if !omitted.isEmpty {
            note("swift-record convert: warning: left out \(omitted.map(\.description).joined(separator: "; "))")
        }
    }

    private func describe(_ converter: MediaFileConverter) {
        let length = converter.inputDuration.map { String(format: ", %.3f s", $0.seconds) } ?? ""
        note("swift-record: \(input): \(converter.containerName)\(length)")
        for plan in converter.tracks {
            switch plan {
            case .copy(let t):
                note("swift-record:   \(t) → copied")
            case .encodeVideo(let t, let s):
                var rate: String
                switch s.rateControl {
                case .averageBitRate(let b): rate = formatBitRate(Double(b))
                case .constantQuality(let q): rate = "crf \(q)"
                case .constantQuantizer(let q): rate = q == 0 ? "lossless" : "qp \(q)"
                case .encoderDefault: rate = "encoder default"
                }
                if let p = s.preset { rate += ", \(p)" }
                note("swift-record:   \(t) → \(s.codec) \(s.width)x\(s.height) (\(rate))")
            case .encodeAudio(let t, let a):
                note("swift-record:   \(t) → \(a.codec) \(a.sampleRate) Hz \(a.channelLayout), \(formatBitRate(Double(a.bitRate)))")
            case .convertSubtitle(let t, let codec):
                note("swift-record:   \(t) → \(codec) (a .\(converter.fileType) file cannot carry \(t.codecName); the text is kept, its styling may not be)")
            }
        }
        for a in converter.attachments { note("swift-record:   attachment \(a) → copied") }
        for other in converter.omittedStreams { note("swift-record:   \(other.stream) → left out: \(other.reason)") }
        let copying = converter.tracks.allSatisfy { if case .copy = $0 { return true } else { return false } }
        note("swift-record: \(copying ? "copying" : "converting") → \(converter.outputPath)")
    }
}
