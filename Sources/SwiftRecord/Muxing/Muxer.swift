internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of an output `AVFormatContext`: a file path or a URL. Streams are added,
/// the header written once, packets written interleaved, then the trailer. Held by whoever
/// writes through it, on that one thread: the writing pipeline's outputs (the recording's
/// file, on the pipeline's thread), a live output's connection (`rtmp://`, `srt://`, HLS,
/// on that output's thread), a replay clip being saved or a file being repaired or remuxed
/// (on the thread that asked). Not `Sendable`.
final class Muxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    let url: String
    /// `url` as messages show it (an RTMP stream key hidden).
    var displayURL: String
    private(set) var headerWritten = false
    private var ioOpen = false
    /// What the context's callbacks use (`opaque`): released only after the context is freed.
    var callbackOwner: AnyObject?

    /// Crash-safe writing: the first fragment ends at `initial`, later ones every `interval`
    /// (both in microseconds of media time). Nil: one index written at the end.
    struct FragmentPlan {
        let initial: Int64
        let interval: Int64
    }
    private(set) var fragmentPlan: FragmentPlan?

    /// In-memory segments instead of a file, when asked for (`Muxer+Segments`).
    var segments: SegmentPlan?
    /// Per stream, in the current segment: earliest presentation time and latest end (the
    /// packets' own ticks on the session's timeline), their time base, and whether the
    /// first packet was a key frame.
    var segmentContents: [Int32: (earliest: Int64, end: Int64, timeBase: AVRational, key: Bool)] = [:]
    /// Per stream, ticks added to every packet's timestamps (see `setPriming`).
    var shifts: [Int32: Int64] = [:]
    /// Fragmented MP4/MOV: per stream, ticks (of the packets' own time base) added so its
    /// first decode time is 0, which an empty moov, written before any packet, needs (a
    /// video track with B-frames starts its decode times before 0). Found at the first
    /// packet; the rewrite at the end starts every track at 0 anyway.
    var startShifts: [Int32: Int64] = [:]
    /// Whether `startShifts` applies: fragmented MP4/MOV.
    var shiftsStarts = false
    var priming: [Int32: (ticks: Int64, codec: AudioCodec, timeBase: AVRational)] = [:]
    /// Matroska: how far every stream is moved later so that AAC's priming starts at 0.
    var leadMicroseconds: Int64 = 0
    /// Segments: whether libavformat has written the moov (at the first flush).
    var moovWritten = false
    private var nextBoundary: Int64 = 0
    /// With fragments: the file's length after the last header or fragment that reached it
    /// whole (flushed without a write error). A write that fails part-way (a full disk)
    /// leaves a cut-off sample after it; the file is cut back to here.
    private(set) var completeLength: Int64?
    static let microseconds = AVRational(num: 1, den: 1_000_000)

    /// `displayURL`: what messages call the output, when `url` is a file's `ioPath`.
    convenience init(url: String, fileType: FileType, displayURL: String? = nil) throws(SwiftRecordError) {
        try self.init(url: url, formatName: fileType.muxerName)
        if let displayURL { self.displayURL = displayURL }
    }

    /// An output of libavformat's muxer `formatName` ("mp4", "flv", "mpegts", "hls", …).
    init(url: String, formatName: String) throws(SwiftRecordError) {
        _ = FFmpegLog.configure
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        // The path's own bytes (`PathBytes`): HLS derives its segment names from this one.
        try check(PathBytes.withCString(url) { avformat_alloc_output_context2(&ctx, nil, formatName, $0) },
                  "avformat_alloc_output_context2(\(formatName))")
        guard let ctx else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_alloc_output_context2", message: "no context returned")
        }
        context = ctx
        self.url = url
        displayURL = url
    }

    deinit {
        if ioOpen { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
    }

    /// Whether encoders must put their parameter sets in extradata (MP4, MOV, MKV).
    var wantsGlobalHeader: Bool {
        (context.pointee.oformat.pointee.flags & sr_format_flag_global_header()) != 0
    }

    /// Opens the output and writes the header. With a fragment plan, MP4/MOV are written
    /// as fragments (an empty moov first, then moof+mdat pairs) and MKV clusters are closed
    /// at the same boundaries, each flushed to the file, so a killed process leaves a file
    /// that plays up to the last boundary.
    func writeHeader(metadata: [String: String], options: [String: String], fragments: FragmentPlan? = nil) throws(SwiftRecordError) {
        var options = options
        if fragments != nil || segments != nil {
            if let fragments {
                fragmentPlan = fragments
                nextBoundary = fragments.initial
            }
            let name = String(cString: context.pointee.oformat.pointee.name)
            if let segments, name == "mp4" || name == "mov" {
                // Segments are whole by themselves (no fragment index at the end) and no
                // rewrite comes after them: the moov is written with the first fragment
                // (`delay_moov`), once every track's first times are known, with an edit list
                // per track that starts its pictures and its sound (past AAC's priming) at the
                // same 0. The initialization segment is handed over then (`SegmentOutput`).
                options["movflags"] = "+frag_custom+delay_moov+default_base_moof+skip_trailer"
                if segments.profile == .mpeg4CMAFCompliant { options["movflags", default: ""] += "+cmaf" }
                options["avoid_negative_ts"] = "disabled"
            } else if name == "mp4" || name == "mov" {
                // frag_discont: a track's first fragment is at its first decode time (one starting late keeps its place).
                options["movflags"] = "+frag_custom+empty_moov+default_base_moof+frag_discont"
                // No edit list in the fragments (an empty moov cannot hold a meaningful one:
                // libavformat warns); the rewrite at the end writes them. Tracks start at
                // decode time 0 (`startShifts`).
                options["use_editlist"] = "0"
                shiftsStarts = true
                // Each track starts its fragments at its own first decode time (the rewrite
                // at the end moves each back to 0); libavformat's shift of every track by
                // the most negative first time would leave a hole after an audio track's
                // first sample.
                options["avoid_negative_ts"] = "disabled"
                shifts = priming.mapValues(\.ticks)
            }
        }
        let name = String(cString: context.pointee.oformat.pointee.name)
        if name == "webm" || name == "matroska" {
            // Matroska stores Opus's pre-skip as CodecDelay and takes the stream from 0; given
            // the negative start, libavformat would shift every track instead.
            shifts = priming.filter { $0.value.codec == .opus }.mapValues(\.ticks)
            // Other priming (AAC's 1024 samples) starts before 0. libavformat would move every
            // stream later by it only if that stream's first packet came before a cluster was
            // written, which a late sound source (a player's long buffer, a silence fill at the
            // end) does not: "failed to avoid negative pts". Every stream is moved here instead,
            // from the start, by the same amount (what libavformat does when it can).
            leadMicroseconds = priming.values.filter { $0.codec != .opus }
                .map { av_rescale_q_rnd($0.ticks, $0.timeBase, Muxer.microseconds, AV_ROUND_UP) }.max() ?? 0
            if leadMicroseconds > 0 { options["avoid_negative_ts"] = "disabled" }
        }
        for (k, v) in metadata {
            av_dict_set(&context.pointee.metadata, k, v, 0)
        }
        if (context.pointee.oformat.pointee.flags & sr_format_flag_nofile()) == 0 && context.pointee.pb == nil {
            // A file output was created (exclusively) by its `OutputFile` before this.
            // The context's interrupt callback (set by a live output; none for a file) lets a
            // stalled connection be abandoned.
            let ctx = context
            try check(PathBytes.withCString(url) { avio_open2(&ctx.pointee.pb, $0, sr_io_flag_write(), &ctx.pointee.interrupt_callback, nil) },
                      "open \(displayURL)", kind: .io, hint: "cannot open for writing")
            ioOpen = true
        }
        var opts: OpaquePointer? = nil
        defer { av_dict_free(&opts) }
        // Values may be paths (HLS's segment names): their own bytes (`PathBytes`).
        for (k, v) in options { PathBytes.withCString(v) { _ = av_dict_set(&opts, k, $0, 0) } }
        try check(avformat_write_header(context, &opts), "avformat_write_header(\(displayURL))")
        headerWritten = true
        if segments != nil, let pb = context.pointee.pb {
            // Whatever the header wrote stays for the first segment (`delay_moov`).
            avio_flush(pb)
            try checkOutput()
        }
        if fragmentPlan != nil, let pb = context.pointee.pb {
            // The header (an empty moov) goes to the file at once: a recording killed before
            // its first fragment still opens.
            avio_flush(pb)
            try checkOutput()
            completeLength = avio_seek(pb, 0, SEEK_CUR)
        }
    }

    /// Writes `packet` (its timestamps in ticks of `timeBase`) to stream `index`, taking
    /// its data: the packet is empty after.
    func write(_ packet: Packet, stream index: Int32, from timeBase: Rational) throws(SwiftRecordError) {
        try write(packet.pointer, stream: index, from: timeBase.avRational)
    }

    /// Writes one packet (its timestamps in `from`), taking its data.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational) throws(SwiftRecordError) {
        packet.pointee.stream_index = index
        try noteForSegment(packet, stream: index, from: timeBase)
        place(packet, stream: index, from: timeBase)
        let end = av_rescale_q(packet.pointee.pts + packet.pointee.duration, self.timeBase(ofStream: index), Muxer.microseconds)
        // A subtitle may be shown for long: only pictures and sound decide where fragments end.
        let timed = context.pointee.streams[Int(index)]?.pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_SUBTITLE
        try check(av_interleaved_write_frame(context, packet), "write \(displayURL)")
        if let plan = fragmentPlan, timed, end >= nextBoundary {
            try flushFragment()
            while nextBoundary <= end { nextBoundary += plan.interval }
        }
        try checkOutput()
    }

    /// Throws the output's pending write error, if it has one (AVIOContext keeps it).
    private func checkOutput() throws(SwiftRecordError) {
        if let pb = context.pointee.pb {
            try check(pb.pointee.error, "write \(displayURL)", kind: .io)
        }
    }

    /// Ends the current fragment (MP4/MOV) or cluster (MKV) and pushes it to the file.
    func flushFragment() throws(SwiftRecordError) {
        try check(av_interleaved_write_frame(context, nil), "write \(displayURL)")
        try check(av_write_frame(context, nil), "write \(displayURL)")
        guard let pb = context.pointee.pb else { return }
        avio_flush(pb)
        try checkOutput()
        if fragmentPlan != nil { completeLength = avio_seek(pb, 0, SEEK_CUR) }
    }

    /// Closes the output without writing the trailer (writing was cancelled).
    func abandon() {
        headerWritten = false
        if ioOpen { avio_closep(&context.pointee.pb); ioOpen = false }
    }

    /// Writes the trailer (index) and closes the output.
    func finish() throws(SwiftRecordError) {
        var closed: Int32 = 0
        defer {
            if ioOpen { avio_closep(&context.pointee.pb); ioOpen = false }
        }
        guard headerWritten else { return }
        if segments != nil, !segmentContents.isEmpty { try cutSegment() }
        headerWritten = false
        try check(av_write_trailer(context), "finish \(displayURL)", kind: .io)
        try checkOutput()
        if let segments, let pb = context.pointee.pb {
            avio_flush(pb)
            segments.output.deliverSegment(segments.output.take(), report: nil)
        }
        // The last buffered bytes reach the file on close: its error counts too.
        if ioOpen {
            closed = avio_closep(&context.pointee.pb)
            ioOpen = false
        }
        try check(closed, "close \(displayURL)", kind: .io)
    }
}
