internal import CFFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads the samples of a media file (any file libavformat opens: MP4, MOV, MKV, WebM,
/// MPEG-TS, …) through track outputs: compressed samples as they are (to remux them with a
/// pass-through writer input), or decoded pictures and sound in the format asked for.
///
/// Lifecycle, as on Apple platforms: `init(url:)` (the tracks are known from here) →
/// `add(_:)` an `AssetReaderTrackOutput` per track wanted → optionally `timeRange` →
/// `startReading()` → `copyNextSampleBuffer()` on each output until it returns nil →
/// `status` is `.completed`; `cancelReading()` stops early. A failure throws from
/// `copyNextSampleBuffer()`, and `status` turns `.failed` with `error` saying why.
///
/// ```swift
/// let reader = try AssetReader(url: URL(fileURLWithPath: "in.mkv"))
/// let video = reader.tracks.first { $0.mediaType == .video }!
/// let output = AssetReaderTrackOutput(track: video, outputSettings: nil)
/// try reader.add(output)
/// try reader.startReading()
/// while let sample = try output.copyNextSampleBuffer() { … }
/// ```
///
/// The counterpart of `AVAssetReader` on Apple platforms (which reads an `AVAsset`; here
/// the file's URL).
public final class AssetReader: Sendable {
    /// Where the reader is (`AVAssetReader.Status`).
    public enum Status: String, Sendable {
        /// Not started: outputs may be added, `timeRange` set.
        case unknown
        /// `startReading()` was called; samples are being read.
        case reading
        /// Every output has handed out its last sample.
        case completed
        /// Reading failed; `error` says why.
        case failed
        /// `cancelReading()` stopped it.
        case cancelled
    }

    /// The file read.
    public let url: URL
    /// The file's audio and video tracks, in the file's order (`asset.tracks`). Other
    /// streams (subtitles, data) are not tracks: ``otherStreams`` lists them.
    public let tracks: [AssetReaderTrack]
    /// The file's subtitle streams, in the file's order (`asset.tracks(withMediaType:
    /// .subtitle)`): a track output reads their compressed samples (`outputSettings` nil).
    public let subtitleTracks: [AssetReaderTrack]
    /// The files the container carries (fonts for ASS subtitles, cover art): Matroska's
    /// attachments.
    public let attachments: [AssetAttachment]
    /// The file's streams that are neither audio nor video (subtitles, attachments, data):
    /// the subtitles are also ``subtitleTracks``, the attachments ``attachments``.
    public let otherStreams: [OtherStream]
    /// How long the file lasts, when it says (`asset.duration`): from `startTime` to its end.
    public let duration: MediaTime?
    /// Where the file's timeline starts: its earliest time stamp (libavformat's start time;
    /// zero when unknown). A capture cut from a stream (`-copyts`), or a file with sound
    /// before 0, does not start at 0; times from the start (`ffmpeg -ss`, a player's clock)
    /// count from here.
    public let startTime: MediaTime
    /// libavformat's name of the container ("matroska,webm", "mov,mp4,m4a,3gp,3g2,mj2", …).
    public let containerName: String

    private struct State {
        var status = Status.unknown
        var error: SwiftRecordError?
        var timeRange = TimeRange(start: .zero, duration: .positiveInfinity)
        var outputs: [AssetReaderTrackOutput] = []
        /// The opened file until `startReading()` hands it to the session.
        var demuxer: Demuxer?
        var session: ReadingSession?
        /// A read has the session (`next`), reading and decoding with the lock released:
        /// other reads wait, and a cancel leaves the session for that read to drop.
        var lent = false
    }
    /// The session, lent to one read at a time (`State.lent`): `@unchecked Sendable` because
    /// only the read that set `lent` touches it until it clears it.
    private struct LentSession: @unchecked Sendable {
        let session: ReadingSession
    }
    private let state: Locked<State>
    /// Interrupts a read blocked on a quiet pipe (`cancelReading()`).
    private let interruption: WakeUp
    private var path: String { url.path }

    /// Opens the file at `url` and reads its header and track list. Throws, naming the
    /// file, when it cannot be opened, is not media libavformat knows, or holds no audio or
    /// video track.
    public convenience init(url: URL) throws(SwiftRecordError) {
        try self.init(url: url, device: nil)
    }

    /// Opens a capture device through libavdevice (`format` `v4l2`, `path` `/dev/video0`,
    /// with its `options`: `video_size`, `framerate`, `input_format`): its one track read as
    /// a file's, each read waiting for the device's next picture (the V4L2 camera source).
    package convenience init(device path: String, format: String, options: [String: String]) throws(SwiftRecordError) {
        try self.init(url: URL(fileURLWithPath: path), device: (format, options))
    }

    private init(url: URL, device: (format: String, options: [String: String])?) throws(SwiftRecordError) {
        self.url = url
        let path = url.path
        let interruption = WakeUp()
        // A file that is missing or unreadable says so; one FFmpeg cannot make sense of is
        // no media file.
        let demuxer: Demuxer
        do {
            demuxer = try Demuxer(path: path, operation: "open \(path)", kind: .io, wakeUp: interruption, device: device)
        } catch {
            let cannotOpen: Set<Int32> = [ENOENT, EACCES, EPERM, EISDIR, ENOTDIR, ENXIO, ELOOP, ENAMETOOLONG, EBUSY, ENODEV]
            if device != nil || error.ffmpegCode.map({ cannotOpen.contains(-$0) }) == true { throw error }
            throw SwiftRecordError(.invalidData, operation: error.operation, message: error.message + "; not a media file this FFmpeg can read",
                                   ffmpegCode: error.ffmpegCode)
        }
        try check(demuxer.findStreamInfo(), "open \(path)", kind: .invalidData, hint: "its tracks cannot be read")
        var tracks: [AssetReaderTrack] = [], subtitles: [AssetReaderTrack] = []
        for index in 0..<demuxer.streamCount {
            guard let stream = demuxer.stream(index),
                  let format = FormatDescription(copying: stream.pointee.codecpar, timeBase: stream.pointee.time_base) else { continue }
            if format.mediaType == .subtitle {
                subtitles.append(AssetReaderTrack(subtitle: stream, index: index, format: format))
                continue
            }
            let d = stream.pointee.duration
            let rate = stream.pointee.avg_frame_rate
            let turn = PictureOrientation(stream: stream)
            tracks.append(AssetReaderTrack(
                trackID: index, mediaType: format.mediaType, formatDescription: format,
                duration: d != sr_nopts_value() && d > 0 ? format.time(ofTicks: d) : nil,
                nominalFrameRate: format.mediaType == .video && rate.num > 0 && rate.den > 0 ? Rational(rate.num, rate.den) : nil,
                preferredTransform: VideoTransform(a: Double(turn.a), b: Double(turn.b), c: Double(turn.c), d: Double(turn.d), tx: 0, ty: 0),
                languageCode: AssetReaderTrack.tag("language", of: stream), title: AssetReaderTrack.tag("title", of: stream)))
        }
        guard !tracks.isEmpty else {
            throw SwiftRecordError(.invalidData, operation: "open \(path)", message: "holds no audio or video track (\(demuxer.formatName))")
        }
        (startTime, duration) = AssetReader.extent(demuxer.context)
        containerName = demuxer.formatName
        otherStreams = OtherStream.list(in: demuxer.context)
        attachments = AssetAttachment.list(in: demuxer.context)
        subtitleTracks = subtitles
        self.tracks = tracks.map { track in
            var t = track
            t.assetURL = device == nil ? url : nil
            return t
        }
        self.interruption = interruption
        state = Locked(State(demuxer: demuxer))
    }

    /// The file's start and length, in microseconds. libavformat's duration is a length when
    /// estimated from the time stamps (MPEG-TS) or the tracks' own lengths, but a header's
    /// (Matroska's segment duration as FFmpeg writes it, an MP4's movie duration with its
    /// empty edit) counts from 0: where the file ends. Such a duration, at or past the end
    /// of every track that states its length, is an end, and the start is taken off.
    private static func extent(_ context: UnsafeMutablePointer<AVFormatContext>) -> (start: MediaTime, duration: MediaTime?) {
        let nopts = sr_nopts_value()
        let start = context.pointee.start_time != nopts ? context.pointee.start_time : 0
        let total = context.pointee.duration
        guard total != nopts, total > 0 else { return (MediaTime(value: start, timescale: 1_000_000), nil) }
        var length = total
        if start != 0, context.pointee.duration_estimation_method != AVFMT_DURATION_FROM_PTS {
            var latestEnd: Int64?
            for i in 0..<Int(context.pointee.nb_streams) {
                guard let st = context.pointee.streams[i], st.pointee.start_time != nopts, st.pointee.duration != nopts,
                      st.pointee.duration > 0 else { continue }
                let end = av_rescale_q(st.pointee.start_time + st.pointee.duration, st.pointee.time_base, AVRational(num: 1, den: 1_000_000))
                latestEnd = max(latestEnd ?? end, end)
            }
            // A millisecond's rounding (Matroska's clock) still counts as reaching the end.
            if latestEnd.map({ total >= $0 - 1_000 }) ?? true, total - start > 0 { length = total - start }
        }
        return (MediaTime(value: start, timescale: 1_000_000), MediaTime(value: length, timescale: 1_000_000))
    }

    /// Opens the file at `path` (`init(url:)`).
    public convenience init(path: String) throws(SwiftRecordError) {
        try self.init(url: URL(fileURLWithPath: path))
    }

    public var status: Status { state[\.status] }
    /// Why reading failed, when `status` is `.failed`.
    public var error: SwiftRecordError? { state[\.error] }
    /// The outputs added (`outputs`).
    public var outputs: [AssetReaderTrackOutput] { state[\.outputs] }

    /// The part of the file to read (`timeRange`); the whole file by default. Set before
    /// `startReading()`. Decoded outputs hand out exactly what lies inside: pictures whose
    /// time is in the range, sound cut to the sample. A compressed output starts at the
    /// key frame at or before the start (decoding needs it) and ends with the last sample
    /// decoded before the end.
    public var timeRange: TimeRange {
        get { state[\.timeRange] }
        set { state.withLock { s in if s.status == .unknown { s.timeRange = newValue } } }
    }

    /// Whether `output` can be added (`canAdd(_:)`): reading has not started, the output is
    /// for one of this reader's tracks, not added already, and its settings suit the track.
    public func canAdd(_ output: AssetReaderTrackOutput) -> Bool {
        (try? state.withLock { s throws(SwiftRecordError) in try validateAdd(output, s) }) != nil
    }

    /// Adds an output (`add(_:)`); throws, saying why, where `canAdd(_:)` is false.
    public func add(_ output: AssetReaderTrackOutput) throws(SwiftRecordError) {
        try state.withLock { s throws(SwiftRecordError) in
            try validateAdd(output, s)
            try output.attach(to: self, index: s.outputs.count)
            s.outputs.append(output)
        }
    }

    private func validateAdd(_ output: AssetReaderTrackOutput, _ s: State) throws(SwiftRecordError) {
        guard s.status == .unknown else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "outputs can only be added before startReading(); the reader is \(s.status)")
        }
        guard !s.outputs.contains(where: { $0 === output }), !output.isAttached else {
            throw SwiftRecordError(.invalidState, operation: "add", message: "the output is already added to a reader")
        }
        guard (tracks + subtitleTracks).contains(where: { $0.trackID == output.track.trackID && $0.formatDescription === output.track.formatDescription }) else {
            throw SwiftRecordError(.invalidArgument, operation: "add", message: "the output's track (\(output.track)) is not one of \(path)'s")
        }
        switch (output.outputSettings, output.track.mediaType) {
        case (nil, _), (.video?, .video): break
        case (.audio(let format)?, .audio): try format.validate("add")
        case (.video?, .audio), (.audio?, .video):
            throw SwiftRecordError(.invalidArgument, operation: "add",
                                   message: "\(output.track) is \(output.track.mediaType); its output settings are for the other kind")
        case (_?, .subtitle):
            throw SwiftRecordError(.unsupported, operation: "add",
                                   message: "\(output.track) is a subtitle track; it is read as compressed samples (outputSettings nil)")
        }
    }

    /// Starts reading (`startReading()`): seeks to `timeRange`'s start and opens the
    /// outputs' decoders. Throws (and turns `.failed`) when a decoder cannot be opened.
    public func startReading() throws(SwiftRecordError) {
        try state.withLock { s throws(SwiftRecordError) in
            guard s.status == .unknown, let demuxer = s.demuxer else {
                throw SwiftRecordError(.invalidState, operation: "startReading", message: "the reader is already \(s.status)")
            }
            guard !s.outputs.isEmpty else {
                throw SwiftRecordError(.invalidState, operation: "startReading", message: "no outputs; add an AssetReaderTrackOutput first")
            }
            do throws(SwiftRecordError) {
                let range = s.timeRange
                let engines = try s.outputs.map { (o) throws(SwiftRecordError) in
                    try TrackOutputEngine(stream: Int32(o.track.trackID), format: o.track.formatDescription,
                                          settings: o.outputSettings, range: range, path: path)
                }
                s.session = try ReadingSession(demuxer: demuxer, engines: engines, range: range, path: path)
                s.demuxer = nil
                s.status = .reading
            } catch {
                s.status = .failed
                s.error = error
                s.demuxer = nil
                throw error
            }
        }
    }

    /// Stops reading (`cancelReading()`): the outputs hand out nothing more and the file is
    /// closed. A read waiting for data (a pipe whose writer went quiet) gives up at once.
    public func cancelReading() {
        interruption.interrupt()
        state.withLock { s in
            if s.status == .unknown || s.status == .reading { s.status = .cancelled }
            // A session lent to a read is dropped (the file closed) when that read ends.
            if !s.lent { s.session = nil }
            s.demuxer = nil
        }
    }

    /// The opened file, taken from a reader that has not started (which then counts as
    /// cancelled): an image generator reads it through a session of its own.
    func takeDemuxer() -> Demuxer? {
        state.withLock { s in
            guard s.status == .unknown, let demuxer = s.demuxer else { return nil }
            s.demuxer = nil
            s.status = .cancelled
            return demuxer
        }
    }

    /// The next sample of output `index` (its `copyNextSampleBuffer()`); with `reading`
    /// false only from the packets read so far (`copyNextSampleBufferIfRead()`). The
    /// session is lent out under the lock and read and decoded with it released, so
    /// `status`, `cancelReading()` and the outputs' bookkeeping never wait behind a decode or
    /// a read blocked on a quiet pipe or a camera; reads of several outputs take turns.
    func next(_ index: Int, reading: Bool = true) throws(SwiftRecordError) -> MediaSample? {
        let lent = try state.wait { s throws(SwiftRecordError) -> LentSession?? in
            switch s.status {
            case .unknown:
                throw SwiftRecordError(.invalidState, operation: "copyNextSampleBuffer", message: "call startReading() first")
            case .failed:
                throw s.error ?? SwiftRecordError(.invalidState, operation: "copyNextSampleBuffer", message: "reading failed")
            case .cancelled, .completed:
                return .some(nil)
            case .reading:
                break
            }
            if s.lent { return nil }
            guard let session = s.session else { return .some(nil) }
            s.lent = true
            return .some(LentSession(session: session))
        }
        guard let lent = lent ?? nil else { return nil }
        let read: Result<MediaSample?, SwiftRecordError>
        do throws(SwiftRecordError) {
            read = .success(try reading ? lent.session.next(index) : lent.session.nextIfRead(index))
        } catch {
            read = .failure(error)
        }
        let finished = lent.session.allFinished
        return try state.withLockNotifying { s throws(SwiftRecordError) -> MediaSample? in
            s.lent = false
            guard s.status == .reading else {
                s.session = nil
                return nil
            }
            switch read {
            case .success(let sample?):
                return sample
            case .success(nil):
                if finished {
                    s.status = .completed
                    s.session = nil
                }
                return nil
            case .failure(let error):
                s.session = nil
                if interruption.isInterrupted {
                    s.status = .cancelled
                    return nil
                }
                s.status = .failed
                s.error = error
                throw error
            }
        }
    }
}
