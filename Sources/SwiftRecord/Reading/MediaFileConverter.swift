import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Converts any media file libavformat opens (MKV, MP4, MOV, WebM, MPEG-TS, …) into an
/// MP4, MOV, MKV or WebM file: the job behind `swift-record convert` for input that is not
/// raw video. Every track is either re-encoded (the video with the settings given, the
/// sound to the output container's default codec) or, with `copy`, passed through as it
/// is (a remux). Subtitle tracks are copied where the output's container takes their
/// codec, else a text one becomes the container's text codec (`mov_text`, SubRip, WebVTT);
/// attachments (fonts) go into Matroska; what cannot be carried is left out and named
/// (``omittedStreams``). An `AssetReader` feeds an `AssetWriter`, the samples interleaved by time.
///
/// Making a converter checks what can be checked before writing (the input opens, the
/// output's container can carry every copied codec, the file rules); `run()` then
/// converts. On failure the output is removed unless `allowPartial` keeps what was written.
/// An MP4 or MOV is written crash-safe, as fragments of a second (as a recording is), so a
/// process killed mid-way leaves a file that plays and that `MediaRepair` makes ordinary.
public final class MediaFileConverter: Sendable {
    /// What to convert, and how.
    public struct Options: Sendable {
        public var input: String
        /// The output file; nil: the input's name with `.mp4` (`.mkv` when the input is an MP4).
        public var output: String?
        /// Pass every track through untouched (a remux), instead of re-encoding.
        public var copy: Bool
        /// The video encoder's settings (size and frame rate are the input's): codec, rate
        /// control, preset, key-frame interval, threads.
        public var codec: VideoCodec?
        public var rateControl: RateControl
        public var preset: String?
        public var keyFrameInterval: Int?
        public var threads: Int?
        /// Re-encoded sound: the codec (default: AAC, Opus for WebM) and bit rate.
        public var audioCodec: AudioCodec?
        public var audioBitRate: Int?
        public var overwrite: Bool
        public var allowPartial: Bool

        public init(input: String, output: String? = nil, copy: Bool = false, codec: VideoCodec? = nil,
                    rateControl: RateControl = .averageBitRate(2_000_000), preset: String? = "veryfast",
                    keyFrameInterval: Int? = nil, threads: Int? = nil, audioCodec: AudioCodec? = nil,
                    audioBitRate: Int? = nil, overwrite: Bool = false, allowPartial: Bool = false) {
            self.input = input
            self.output = output
            self.copy = copy
            self.codec = codec
            self.rateControl = rateControl
            self.preset = preset
            self.keyFrameInterval = keyFrameInterval
            self.threads = threads
            self.audioCodec = audioCodec
            self.audioBitRate = audioBitRate
            self.overwrite = overwrite
            self.allowPartial = allowPartial
        }
    }

    /// What becomes of one track.
    public enum TrackPlan: Sendable {
        case copy(AssetReaderTrack)
        case encodeVideo(AssetReaderTrack, VideoSettings)
        case encodeAudio(AssetReaderTrack, AudioSettings)
        /// A text subtitle track the output's container cannot carry as it is, re-encoded
        /// to the text codec it takes (`mov_text`, `subrip`, `webvtt`), at the same times.
        case convertSubtitle(AssetReaderTrack, codecName: String)

        public var track: AssetReaderTrack {
            switch self {
            case .copy(let t), .encodeVideo(let t, _), .encodeAudio(let t, _), .convertSubtitle(let t, _): return t
            }
        }
    }

    /// What a finished conversion did.
    public struct Result: Sendable {
        public var outputPath: String
        /// Pictures written (video samples, compressed or decoded).
        public var framesWritten: Int
        /// The end of the last sample written, from the session's start.
        public var duration: MediaTime
        public var outputBytes: Int64
        public var elapsedSeconds: Double
        /// True when `cancel()` stopped it and `allowPartial` kept what was written.
        public var stoppedEarly: Bool
        /// Subtitles shown before the first picture or sound (the session's start), which
        /// the output cannot hold: left out, and counted here to be said.
        public var subtitlesBeforeStart = 0
    }

    public let options: Options
    public let outputPath: String
    public let fileType: FileType
    public let tracks: [TrackPlan]
    /// The input's container and duration, for messages.
    public let containerName: String
    public let inputDuration: MediaTime?
    /// The input's streams that are not in the output, each with the reason.
    public let omittedStreams: [OmittedStream]
    /// The input's attachments carried into the output (Matroska only).
    public let attachments: [AssetAttachment]
    /// The input, opened once (a pipe can only be read once).
    private let reader: AssetReader

    private struct State {
        var cancelled = false
        var running = false
        var frames = 0
        var subtitlesBeforeStart = 0
        var startedAt: Double?
        var keptFilePath: String?
    }
    private let state = Locked(State())

    /// After a failed `run()` with `allowPartial`: the file that holds what was written.
    public var keptFilePath: String? { state[\.keptFilePath] }
    /// Pictures written so far.
    public var framesWritten: Int { state[\.frames] }

    public init(options: Options) throws(SwiftRecordError) {
        self.options = options
        let reader = try AssetReader(path: options.input)
        self.reader = reader
        containerName = reader.containerName
        inputDuration = reader.duration
        let out = options.output ?? MediaFileConverter.defaultOutput(for: options.input)
        guard let fileType = FileType(pathExtension: URL(fileURLWithPath: out).pathExtension) else {
            throw SwiftRecordError(.invalidArgument, operation: "output",
                                   message: "'\(out)' has no known container extension; expected .mp4, .mov, .mkv or .webm")
        }
        var plans: [TrackPlan] = []
        for track in reader.tracks {
            if options.copy {
                plans.append(.copy(track))
            } else if track.mediaType == .video {
                plans.append(.encodeVideo(track, try MediaFileConverter.videoSettings(for: track, options: options, fileType: fileType)))
            } else {
                let codec = options.audioCodec ?? (fileType == .webm ? .opus : .aac)
                guard fileType.supports(codec) else {
                    throw SwiftRecordError(.unsupported, operation: "output", message: "a .\(fileType) file cannot carry \(codec) sound")
                }
                // Opus runs at 48 kHz; AAC keeps the input's rate where it is a usual one.
                let rate = codec == .opus || ![44_100, 48_000, 32_000, 96_000].contains(track.sampleRate) ? 48_000 : track.sampleRate
                let layout = ChannelLayout(channelCount: min(max(1, track.channelCount), 2))
                plans.append(.encodeAudio(track, AudioSettings(codec: codec, sampleRate: rate, channelLayout: layout,
                                                               bitRate: options.audioBitRate ?? 128_000)))
            }
        }
        if options.copy { try MediaFileConverter.checkCopies(reader.tracks, fit: fileType) }
        let others = MediaFileConverter.planOtherStreams(of: reader, into: fileType)
        plans += others.plans
        attachments = others.attachments
        omittedStreams = others.omitted
        // The rule for written files (existing, device, symlink, the input itself).
        let anyFile = try OutputFile(out, what: "output", overwrite: true)
        if let input = FileIdentity(path: options.input) {
            try OutputFile.checkDistinct(outputs: [("output", anyFile)], inputs: [("input", input)])
        }
        _ = try OutputFile(out, what: "output", overwrite: options.overwrite)
        outputPath = out
        self.fileType = fileType
        tracks = plans
    }

    /// `in.mkv` → `in.mp4`; an MP4 input → `.mkv`, so the default never names the input.
    static func defaultOutput(for input: String) -> String {
        let ext = URL(fileURLWithPath: input).pathExtension.lowercased()
        return WriterJob.replacingExtension(of: input, with: ext == "mp4" ? "mkv" : "mp4")
    }

    /// Compressed samples queued per copied track. A copy's samples cost nothing to hold
    /// (references to the packets read) and little to mux, so with a short queue the
    /// reading and muxing threads took turns every few samples (8.7 k context switches in
    /// a 10-minute remux); a deep one lets each run for a while (bench/copy.py).
    static let copyQueueDepth = 256

    /// How much earlier than its header says an input may end (the last frame's length,
    /// audio priming, rounding) before it counts as cut short.
    static let shortfallTolerance = MediaTime(value: 1, timescale: 2)

    /// Stops after the sample in progress; `run()` then throws `.cancelled` (and removes
    /// the output unless `allowPartial`, when it finishes the file and returns).
    public func cancel() {
        state.withLock { $0.cancelled = true }
        // A read waiting on a quiet pipe returns now; the reader then gives nothing more.
        reader.cancelReading()
    }

    public var elapsedSeconds: Double {
        state[\.startedAt].map { Double(MonotonicClock.nanoseconds()) / 1e9 - $0 } ?? 0
    }

    /// Converts every track and finishes the file. Can be called once.
    public func run() async throws(SwiftRecordError) -> Result {
        try state.withLock { (s: inout sending State) throws(SwiftRecordError) in
            guard !s.running else {
                throw SwiftRecordError(.invalidState, operation: "MediaFileConverter.run", message: "the conversion has already run")
            }
            s.running = true
            s.startedAt = Double(MonotonicClock.nanoseconds()) / 1e9
        }
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: outputPath), fileType: fileType)
        writer.overwritesExistingFile = options.overwrite
        writer.attachments = attachments
        writer.writeCrashSafe(copiedCodecs: tracks.compactMap { if case .copy(let t) = $0 { t.formatDescription.codecName } else { nil } },
                              subtitles: tracks.contains { $0.track.mediaType == .subtitle })
        let job = WriterJob(writer: writer, outputPath: outputPath, allowPartial: options.allowPartial)
        let end: MediaTime
        do {
            end = try await job.run(threadName: "swift-record.convert") { () throws(SwiftRecordError) in try self.pump(writer) } ?? .zero
        } catch {
            state.withLock { $0.keptFilePath = error.keptPath }
            throw error.error
        }
        let cancelled = state[\.cancelled]
        // A file cut short reads to its cut without an error from FFmpeg; its header still says how long it was.
        if !cancelled, let declared = inputDuration, declared - end > MediaFileConverter.shortfallTolerance {
            state.withLock { $0.keptFilePath = outputPath }
            throw SwiftRecordError(.invalidData, operation: "read \(options.input)",
                                   message: String(format: "ended at %.3f s, before the %.3f s its header declares: the file is cut short or damaged",
                                                   end.seconds, declared.seconds))
        }
        var st = stat()
        let bytes: Int64 = PathBytes.withCString(outputPath, { stat($0, &st) }) == 0 ? Int64(st.st_size) : 0
        return Result(outputPath: outputPath, framesWritten: state[\.frames], duration: end, outputBytes: bytes,
                      elapsedSeconds: elapsedSeconds, stoppedEarly: cancelled, subtitlesBeforeStart: state[\.subtitlesBeforeStart])
    }

    /// On the conversion thread: reads every track and appends each sample to its input,
    /// the track whose next sample comes first each time, so the file interleaves. Returns
    /// the end of the last sample, from the session's start.
    private func pump(_ writer: AssetWriter) throws(SwiftRecordError) -> MediaTime {
        var outputs: [AssetReaderTrackOutput] = []
        var inputs: [AssetWriterInput] = []
        var paddings: [Int: EvenPadding] = [:]
        let lanes = try tracks.filter { $0.track.mediaType == .subtitle }
            .map { (plan) throws(SwiftRecordError) in try SubtitleLane(plan, path: options.input) }
        for plan in tracks where plan.track.mediaType != .subtitle {
            let track = plan.track
            switch plan {
            case .copy:
                outputs.append(AssetReaderTrackOutput(track: track, outputSettings: nil))
                let input = try AssetWriterInput(mediaType: track.mediaType, outputSettings: nil, sourceFormatHint: track.formatDescription)
                input.queueDepth = MediaFileConverter.copyQueueDepth
                inputs.append(input)
            case .encodeVideo(_, let settings):
                let steps = try MediaFileConverter.pictureSteps(for: track, settings)
                outputs.append(AssetReaderTrackOutput(track: track, outputSettings: steps.read))
                paddings[inputs.count] = steps.padding
                let input = AssetWriterInput(outputSettings: settings)
                input.queueDepth = WriterJob.pictureQueueDepth
                inputs.append(input)
            case .encodeAudio(_, let settings):
                outputs.append(AssetReaderTrackOutput(track: track, outputSettings: .audio(AudioFormat(
                    sampleType: .f32, isPlanar: true, sampleRate: settings.sampleRate, channelLayout: settings.channelLayout))))
                inputs.append(AssetWriterInput(mediaType: .audio, outputSettings: settings))
            case .convertSubtitle: break
            }
        }
        for (i, o) in outputs.enumerated() where o.track.mediaType == .video {
            inputs[i].transform = o.track.preferredTransform
        }
        for o in outputs + lanes.map(\.output) { try reader.add(o) }
        for i in inputs + lanes.map(\.input) { try writer.add(i) }
        defer {
            reader.cancelReading()
            for i in inputs + lanes.map(\.input) { i.markAsFinished() }
        }
        try reader.startReading()
        // The first sample of each track, before anything is written: the session starts at
        // the earliest, and a file with nothing to read leaves no output.
        var next: [MediaSample?] = []
        for o in outputs { next.append(try o.copyNextSampleBuffer()) }
        let times = next.compactMap { $0?.presentationTimeStamp }
        guard let start = times.min() else {
            throw SwiftRecordError(.invalidData, operation: "read \(options.input)", message: "holds no sample to convert")
        }
        try writer.startWriting()
        try writer.startSession(atSourceTime: start)
        var end = MediaTime.zero
        // Per track, the last decoded picture's time: a picture lasts until the next one, the
        // last one frame of the track's rate (or as long as the one before it).
        var lastPicture: [Int: MediaTime] = [:]
        while true {
            if state[\.cancelled] {
                throw SwiftRecordError(.cancelled, operation: "convert", message: "cancelled after \(state[\.frames]) frames")
            }
            var pick: Int?
            for (i, s) in next.enumerated() {
                guard let s else { continue }
                if let p = pick, let q = next[p], MediaFileConverter.orderTime(q) <= MediaFileConverter.orderTime(s) { continue }
                pick = i
            }
            guard let i = pick, let sample = next[i] else { break }
            try inputs[i].append(paddings[i].map { (p: EvenPadding) throws(SwiftRecordError) in try p.apply(sample) } ?? sample)
            end = max(end, MediaFileConverter.endTime(sample) - start)
            if case .video(let picture) = sample {
                let pts = picture.presentationTimeStamp
                if let rate = outputs[i].track.nominalFrameRate, rate.numerator > 0 {
                    end = max(end, pts + MediaTime(value: Int64(rate.denominator), timescale: rate.numerator) - start)
                } else if let previous = lastPicture[i], pts > previous {
                    end = max(end, pts + (pts - previous) - start)
                }
                lastPicture[i] = pts
            }
            if inputs[i].mediaType == .video { state.withLock { $0.frames += 1 } }
            next[i] = try outputs[i].copyNextSampleBuffer()
            if next[i] == nil { inputs[i].markAsFinished() }
            // The subtitles the reading of pictures and sound has reached.
            for lane in lanes { end = max(end, try lane.append(start: start)) }
        }
        if !state[\.cancelled] {
            for lane in lanes { end = max(end, try lane.append(start: start, toEnd: true)) }
        }
        let early = lanes.reduce(0) { $0 + $1.skipped }
        state.withLock { $0.subtitlesBeforeStart = early }
        // A cancel ends the reading early: that is no end of the input.
        if state[\.cancelled] {
            throw SwiftRecordError(.cancelled, operation: "convert", message: "cancelled after \(state[\.frames]) frames")
        }
        return end
    }
}
