import ArgumentParser
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Convert a media file (MKV, MP4, MOV, WebM, …), raw video (.yuv, .rgb, …) or YUV4MPEG2 (.y4m) to MP4, MOV, MKV or WebM.",
        discussion: """
        A media file (anything FFmpeg opens that is not raw video or Y4M) is re-encoded by default: the video with the encoder options below at its own size, every audio track to the output container's audio codec (AAC; Opus for .webm). --copy passes every track through untouched instead (a remux: MKV to MP4 in seconds). Subtitle tracks are copied either way, with their language and title, where the output container takes their codec; a text subtitle it does not take becomes its text codec (mov_text in .mp4/.mov, SubRip in .mkv, WebVTT in .webm); attachments (fonts) go into .mkv; what cannot be carried (picture subtitles outside .mkv, attachments outside .mkv, data streams) is left out, and the plan and a warning name it with the reason. An .mp4/.mov with subtitles is written as an ordinary file, not crash-safe. A codec the output container cannot carry (H.264 in .webm, VP9 or FLAC in .mov) is refused before anything is written, naming the containers that can carry every track.

        Raw input needs --size (and --pix-fmt unless it is yuv420p); Y4M input carries its own size, rate and colour space, and is recognised by its header whatever its name. The input may be - for standard input. Everything that can be checked is checked before encoding; on an error no output file is left behind (unless --allow-partial). A conversion killed where it cannot clean up (SIGKILL, a crash) leaves an MP4/MOV written crash-safe, as a recording's: it plays up to its last fragment, and `swift-record repair` makes it an ordinary file.

        Pictures with an odd side are encoded at the next even size, the last column or row repeated (4:2:0 video needs even sides), media files too; --crop cuts them instead (raw and Y4M input).

        A media file's display rotation (an MP4/MOV display matrix) is kept in .mp4 and .mov; re-encoding into .mkv or .webm, which have none, turns the pixels, and --copy there is refused.

        Pixel formats: \(RawPixelFormat.supportedList).

        EXAMPLES
          swift-record convert in.yuv --size 1280x720 --fps 30000/1001
              Writes in.mp4 (H.264, 2 Mbit/s, veryfast).
          swift-record convert clip.y4m --crf 18 --preset slow -o clip.mp4
          swift-record convert frames.rgb --size 640x480 --pix-fmt rgba --lossless
              Writes frames.mkv (FFV1): every sample kept.
          some-decoder | swift-record convert - --size 1920x1080 --pix-fmt nv12 -o out.mp4
          swift-record convert screen.yuv --size 1920x1080 --fps 30 --audio screen.wav
              Writes screen.mp4 with the sound as AAC, cut where the pictures end.
          swift-record convert recording.mkv --copy
              Writes recording.mp4 with the same packets (no re-encoding).
          swift-record convert recording.mkv -o small.mp4 --crf 28 --preset slow
        """
    )

    @Argument(help: ArgumentHelp("A media file, a raw video or .y4m file, or - for standard input.", valueName: "input"))
    var input: String

    @Flag(help: "Media input: pass every track through untouched (remux) instead of re-encoding.")
    var copy = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file; the extension picks the container (default: the input's name with .mp4, or .mkv for FFV1).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Picture size of raw input, WxH (Y4M says its own).", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var size: VideoSize?

    @Option(name: .customLong("pix-fmt"), help: ArgumentHelp("Pixel format of raw input (default yuv420p): yuv420p/i420, yv12, nv12, nv21, yuv422p, yuv444p, yuyv422, uyvy422, gray, bgra, rgba, rgb24, yuv420p10le, ….", valueName: "name"),
            transform: parsed(RawPixelFormat.parse))
    var pixFmt: RawPixelFormat?

    @Option(help: ArgumentHelp("Frames per second: 30, 60, 30000/1001 (default: the Y4M header's, else 25).", valueName: "rate"),
            transform: parsed(ValueParsing.frameRate))
    var fps: Rational?

    @OptionGroup var encoder: EncoderOptions

    @Flag(help: "Keep every sample: H.264 at qp 0 in the input's chroma format, or FFV1 in .mkv for RGB input and odd sizes.")
    var lossless = false

    @Option(help: ArgumentHelp("Output picture size, WxH (after --rotate).", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var scale: VideoSize?

    @Option(help: ArgumentHelp("Keep only this rectangle of the input: x,y,width,height.", valueName: "x,y,w,h"),
            transform: parsed(ValueParsing.region))
    var crop: CropRegion?

    @Option(help: ArgumentHelp("Turn the picture clockwise: 90, 180 or 270.", valueName: "degrees"))
    var rotate: Int?

    @Flag(name: .customLong("rotate-metadata"), help: "With --rotate: only tag the rotation (display matrix) instead of turning the pixels (MP4/MOV; .mkv and .webm have no display matrix, so their pixels are turned).")
    var rotateMetadata = false

    @Option(help: ArgumentHelp("Convert at most this many frames (required for a device such as /dev/zero).", valueName: "n"))
    var frames: Int?

    @Flag(name: .customLong("allow-partial"), help: "Convert the whole frames of an input that ends inside a frame (with a warning), and keep the output written before an error.")
    var allowPartial = false

    @Flag(name: .shortAndLong, help: "No progress bar and no notes; only errors and warnings.")
    var quiet = false

    @Option(help: ArgumentHelp("Sound for the video: a .wav file (16/24/32-bit or float PCM) or raw s16le PCM (see --audio-rate, --audio-channels); cut where the pictures end.", valueName: "file"))
    var audio: String?

    @Option(help: ArgumentHelp("Audio codec: aac (default; .mp4, .mov, .mkv) or opus (default for .webm).", valueName: "codec"))
    var audioCodec: AudioCodec?

    @Option(help: ArgumentHelp("Audio bit rate: 128k, 96000.", valueName: "rate"), transform: parsed(ValueParsing.bitRate))
    var audioBitrate: Int?

    @Option(help: ArgumentHelp("Sample rate of raw PCM --audio (default 48000; a WAV header says its own).", valueName: "Hz"))
    var audioRate: Int?

    @Option(help: ArgumentHelp("Channels of raw PCM --audio (default 2; a WAV header says its own).", valueName: "n"))
    var audioChannels: Int?

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func validate() throws {
        if let frames, frames < 1 {
            throw outOfRange("--frames", frames, expected: "a whole number of at least 1", otherwise: "is not valid")
        }
        // The codec the output's container gets, by the rule `record` follows too.
        do {
            _ = try encoder.resolvedCodec(for: output.flatMap { FileType(pathExtension: URL(fileURLWithPath: $0).pathExtension) })
        } catch let error as SwiftRecordError {
            note("swift-record convert: \(error.message)")
            throw ExitStatus.refused
        }
        if lossless && (encoder.crf != nil || encoder.qp != nil) {
            throw ValidationError("--lossless fixes the quantiser; drop --crf / --qp")
        }
        if let rotate, ![0, 90, 180, 270].contains(rotate) {
            throw ValidationError("--rotate \(rotate) is not a quarter turn; expected 90, 180 or 270")
        }
        if rotateMetadata && (rotate ?? 0) == 0 {
            throw ValidationError("--rotate-metadata needs --rotate 90, 180 or 270")
        }
        if audio == nil, audioCodec != nil || audioBitrate != nil || audioRate != nil || audioChannels != nil {
            throw ValidationError("--audio-codec, --audio-bitrate, --audio-rate and --audio-channels need --audio FILE")
        }
        if let audioRate, !(8_000...192_000).contains(audioRate) {
            throw outOfRange("--audio-rate", audioRate, expected: "8000 to 192000 Hz", otherwise: "is not valid")
        }
        if let audioChannels, !(1...8).contains(audioChannels) {
            throw outOfRange("--audio-channels", audioChannels, expected: "1 to 8", otherwise: "is not valid")
        }
    }

    /// The sound options: the file's own rate and layout, the codec and bit rate asked for.
    func audioOptions() -> RawVideoConverter.AudioOptions? {
        guard let audio else { return nil }
        let layout = ChannelLayout(channelCount: audioChannels ?? 2)
        return RawVideoConverter.AudioOptions(path: audio, codec: audioCodec, bitRate: audioBitrate,
                                              rawSampleRate: audioRate ?? 48_000, rawChannelLayout: layout)
    }

    func makeOptions() -> RawVideoConverter.Options {
        RawVideoConverter.Options(
            input: input, output: output, size: size, pixelFormat: pixFmt, frameRate: fps,
            // Not chosen: lossless may pick FFV1, a .webm output VP9.
            codec: encoder.codec,
            rateControl: encoder.rateControl, preset: encoder.preset, keyFrameInterval: encoder.keyint,
            threads: encoder.threads == 0 ? nil : encoder.threads, lossless: lossless,
            scale: scale, crop: crop, rotation: rotate ?? 0, rotationInMetadataOnly: rotateMetadata,
            allowPartial: allowPartial, maximumFrames: frames, overwrite: replace.overwrite, audio: audioOptions())
    }

    /// Runs a conversion with Ctrl-C cancelling it and a progress line while it runs. On an
    /// error: says it and what was kept (`keptNote` of the kept file's path), and exits 130
    /// for a cancel, 1 otherwise.
    func execute<R>(cancel: @escaping @Sendable () -> Void, progress text: @escaping @Sendable () -> String,
                    keptPath: () -> String?, keptNote: (String) -> String,
                    _ body: () async throws(SwiftRecordError) -> R) async throws -> R {
        let signals = SignalWatcher { name in
            note("\nswift-record convert: \(name): stopping")
            cancel()
        }
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1, render: text)
        defer {
            progress.stop()
            signals.cancel()
        }
        do {
            return try await body()
        } catch {
            progress.stop()
            note("swift-record convert: \(error.userMessage)")
            if let kept = keptPath() {
                note("swift-record convert: \(keptNote(kept))")
            } else if error.kind != .cancelled || !allowPartial {
                note("swift-record convert: no output written")
            }
            throw error.kind == .cancelled ? ExitStatus.interrupted : ExitStatus.failed
        }
    }

    func run() async throws {
        logging.bootstrap()
        if try isMediaInput() {
            try await runMedia()
            return
        }
        if copy {
            note("swift-record convert: --copy is for media files (MKV, MP4, …); raw video and Y4M are always encoded")
            throw ExitStatus.refused
        }
        let converter: RawVideoConverter
        do {
            converter = try RawVideoConverter(options: makeOptions())
        } catch {
            note("swift-record convert: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        let plan = converter.plan
        if !quiet {
            describe(plan)
            if let track = converter.audioTrack { describe(track) }
        }
        let result = try await execute(cancel: converter.cancel, progress: { Convert.progressText(converter.progress) },
                                       keptPath: { converter.keptFilePath }, keptNote: { kept in
            // Counted in the file: what a reader finds, not what was handed to the writer.
            guard let n = MediaFileReader.videoFrameCount(path: kept), n > 0 else { return "nothing playable was kept: \(kept) holds no readable video" }
            return "kept what was written: \(kept) (\(n) frame\(n == 1 ? "" : "s") readable)\(allowPartial ? " (--allow-partial)" : "")"
        }) { () throws(SwiftRecordError) in try await converter.run() }
        if result.stoppedEarly {
            note("swift-record convert: stopped after \(result.framesWritten) frames\(plan.input.frameCount.map { " of \($0)" } ?? ""); kept \(result.outputPath) (--allow-partial)")
            throw ExitStatus.interrupted
        }
        if result.trailingBytesSkipped > 0 {
            note("swift-record convert: warning: skipped an incomplete last frame (\(result.trailingBytesSkipped) bytes; frames are \(plan.input.frameBytes) bytes)")
        }
        if let seconds = result.audioSeconds, seconds < result.duration.seconds - 0.05 {
            note(String(format: "swift-record convert: note: the sound ends at %.3f s, before the pictures (%.3f s)", seconds, result.duration.seconds))
        }
        if !quiet {
            let fps = result.elapsedSeconds > 0 ? Double(result.framesWritten) / result.elapsedSeconds : 0
            let sound = result.audioSeconds.map { String(format: ", audio %.3f s", $0) } ?? ""
            note(String(format: "swift-record: wrote %@: %d frames, %.3f s%@, %@ in %.2f s (%.1f fps)",
                        result.outputPath, result.framesWritten, result.duration.seconds, sound, formatBytes(result.outputBytes),
                        result.elapsedSeconds, fps))
        }
    }

    private func describe(_ plan: RawVideoConverter.Plan) {
        let i = plan.input
        let name = input == "-" ? "standard input" : input
        let kind = i.container == .y4m ? "YUV4MPEG2 (C\(i.y4mHeader?.colorSpace ?? "420jpeg"))" : "raw"
        let frames = i.frameCount.map { ", \($0) frame\($0 == 1 ? "" : "s")" } ?? ""
        note("swift-record: \(name): \(kind) \(i.size) \(i.pixelFormat), \(i.frameRate) fps\(frames)")
        for n in plan.notes { note("swift-record: note: \(n)") }
        let s = plan.settings
        var rate: String
        switch s.rateControl {
        case .averageBitRate(let b): rate = formatBitRate(Double(b))
        case .constantQuality(let q): rate = "crf \(q)"
        case .constantQuantizer(let q): rate = q == 0 ? "lossless" : "qp \(q)"
        case .encoderDefault: rate = s.codec == .ffv1 ? "lossless" : "encoder default"
        }
        if let p = s.preset, s.codec != .ffv1 { rate += ", \(p)" }
        let degrees = plan.displayTransform.rotationDegrees
        // Matroska and WebM have no display matrix: the writer turns the pictures instead.
        let rotation = degrees == 0 ? "" : (plan.fileType == .mkv || plan.fileType == .webm
            ? ", rotation \(degrees)° in the pixels (a .\(plan.fileType) file has no display matrix)" : ", rotation \(degrees)° in metadata")
        note("swift-record: encoding \(s.width)x\(s.height) \(s.pixelFormat) \(s.codec) (\(rate))\(rotation) → \(plan.outputPath)")
    }

    private func describe(_ track: (file: AudioFormat, settings: AudioSettings)) {
        let a = track.settings
        note("swift-record: \(audio ?? ""): \(track.file) → \(a.codec) \(a.sampleRate) Hz \(a.channelLayout), \(formatBitRate(Double(a.bitRate)))")
    }

    static func progressText(_ p: RawVideoConverter.Progress) -> String {
        let fps = p.elapsedSeconds > 0 ? Double(p.framesWritten) / p.elapsedSeconds : 0
        guard let total = p.totalFrames, total > 0 else {
            return String(format: "%d frames  %.1f fps  %@", p.framesWritten, fps, formatClock(p.elapsedSeconds))
        }
        let fraction = min(1, Double(p.framesWritten) / Double(total))
        let width = 24
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let eta = fps > 0 ? formatClock(Double(total - p.framesWritten) / fps) : "--:--.-"
        return String(format: "[%@] %3d%%  %d/%d frames  %.1f fps  ETA %@", bar, Int(fraction * 100), p.framesWritten, total, fps, eta)
    }
}
