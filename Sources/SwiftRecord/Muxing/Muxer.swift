internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// One libavformat output: a file path or a URL (the recording's file, and each live
/// output's connection: `rtmp://`, `srt://`, HLS). Streams are added, the header written once, packets written
/// interleaved, then the trailer. Owned by the writing pipeline's thread; not `Sendable`.
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
    private var fragmentPlan: FragmentPlan?

    /// In-memory segments (`AssetWriter(contentType:)`): fragmented MP4 written into
    /// `output`, cut where `cuts` says, at a key packet of stream `stream`; each segment
    /// handed over whole with a report of what each stream has in it.
    struct SegmentPlan {
        let output: SegmentOutput
        let cuts: SegmentCuts
        let stream: Int32
        let profile: FileTypeProfile
        /// Per stream: pictures or sound.
        let mediaTypes: [MediaType]
    }
    var segments: SegmentPlan?
    /// Per stream, in the current segment: earliest presentation time and latest end (the
    /// packets' own ticks on the session's timeline), their time base, and whether the
    /// first packet was a key frame.
    private var segmentContents: [Int32: (earliest: Int64, end: Int64, timeBase: AVRational, key: Bool)] = [:]
    /// Per stream, ticks added to every packet's timestamps (see `setPriming`).
    private var shifts: [Int32: Int64] = [:]
    /// Fragmented MP4/MOV: per stream, ticks (of the packets' own time base) added so its
    /// first decode time is 0, which an empty moov, written before any packet, needs (a
    /// video track with B-frames starts its decode times before 0). Found at the first
    /// packet; the rewrite at the end starts every track at 0 anyway.
    private var startShifts: [Int32: Int64] = [:]
    /// Whether `startShifts` applies: fragmented MP4/MOV.
    private var shiftsStarts = false
    private var priming: [Int32: (ticks: Int64, codec: AudioCodec, timeBase: AVRational)] = [:]
    /// Matroska: how far every stream is moved later so that AAC's priming starts at 0.
    private var leadMicroseconds: Int64 = 0
    /// Segments: whether libavformat has written the moov (at the first flush).
    private var moovWritten = false
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

    /// Adds a stream carrying `encoder`'s output, tagged with `metadata`; returns its index.
    func addStream(for encoder: EncoderContext, transform: VideoTransform, metadata: [String: String] = [:]) throws(SwiftRecordError) -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        for (key, value) in trackTags(metadata).sorted(by: { $0.key < $1.key }) {
            try check(av_dict_set(&stream.pointee.metadata, key, value, 0), "av_dict_set(\(key))")
        }
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder.context), "avcodec_parameters_from_context")
        stream.pointee.time_base = encoder.timeBase
        stream.pointee.avg_frame_rate = encoder.frameRate
        stream.pointee.r_frame_rate = encoder.frameRate
        try setDisplayMatrix(of: stream, transform)
        return stream.pointee.index
    }

    /// Adds a stream carrying `format`'s compressed samples as they are (pass-through);
    /// returns its index. The codec tag is left for the muxer to choose: the source
    /// container's (Matroska's, say) may mean nothing in this one.
    func addStream(copying format: FormatDescription, transform: VideoTransform, metadata: [String: String] = [:]) throws(SwiftRecordError) -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        for (key, value) in trackTags(metadata).sorted(by: { $0.key < $1.key }) {
            try check(av_dict_set(&stream.pointee.metadata, key, value, 0), "av_dict_set(\(key))")
        }
        try check(avcodec_parameters_copy(stream.pointee.codecpar, format.parameters), "avcodec_parameters_copy")
        stream.pointee.codecpar.pointee.codec_tag = 0
        Muxer.fillFrameSize(of: stream.pointee.codecpar)
        stream.pointee.time_base = format.timeBase
        try setDisplayMatrix(of: stream, transform)
        return stream.pointee.index
    }

    /// Writes a quarter-turn or mirror transform as the stream's display matrix (MP4/MOV
    /// `tkhd`). FFmpeg's matrix has Apple's layout: a, b, c, d in 16.16 at 0, 1, 3, 4
    /// (`av_display_rotation_set(m, 90)` gives Apple's `rotationAngle: .pi / 2`, which
    /// ffprobe reports as rotation -90). The translation is not written. Other transforms
    /// were refused before (`AssetWriterInput.validateSetUp`).
    private func setDisplayMatrix(of stream: UnsafeMutablePointer<AVStream>, _ transform: VideoTransform) throws(SwiftRecordError) {
        guard let q = transform.quarterTurns, q.turns != 0 || q.mirrored else { return }
        guard let data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_stream_new_side_data", message: "out of memory")
        }
        let exact = VideoTransform(quarterTurns: q.turns, mirrored: q.mirrored)
        data.withMemoryRebound(to: Int32.self, capacity: 9) { m in
            for i in 0..<9 { m[i] = 0 }
            m[0] = Int32(exact.a) << 16
            m[1] = Int32(exact.b) << 16
            m[3] = Int32(exact.c) << 16
            m[4] = Int32(exact.d) << 16
            m[8] = 1 << 30
        }
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

    /// An audio encoder starts `ticks` (its time base) before 0 with priming samples
    /// (AAC's 1024, Opus's pre-skip). A fragmented MP4/MOV cannot say so for AAC (no edit
    /// list in an empty moov) and libavformat would shift every track to make up for it;
    /// instead the stream is written from 0, priming audible, and the rewrite at the end
    /// (`MediaRepair` with `priming`) moves it back behind an edit list. Matroska keeps
    /// Opus's pre-skip itself (CodecDelay) from a stream starting at 0. Other outputs take
    /// the negative times as they are. Call before `writeHeader`.
    func setPriming(_ ticks: Int64, codec: AudioCodec, timeBase: AVRational, stream index: Int32) {
        if ticks > 0 { priming[index] = (ticks, codec, timeBase) }
    }

    /// The priming `setPriming` moved into a fragmented MP4/MOV stream (for the rewrite to
    /// move back), in the stream's time base.
    func primingShift(ofStream index: Int32, from timeBase: AVRational) -> Int64? {
        guard fragmentPlan != nil, let ticks = shifts[index] else { return nil }
        let name = String(cString: context.pointee.oformat.pointee.name)
        return name == "mp4" || name == "mov" ? av_rescale_q(ticks, timeBase, self.timeBase(ofStream: index)) : nil
    }

    func timeBase(ofStream index: Int32) -> AVRational {
        context.pointee.streams[Int(index)]?.pointee.time_base ?? AVRational(num: 1, den: 1)
    }

    /// Writes one packet (its timestamps in `from`), taking its data.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational) throws(SwiftRecordError) {
        packet.pointee.stream_index = index
        if let segments, packet.pointee.pts != sr_nopts_value() {
            let pts = packet.pointee.pts
            if index == segments.stream, (packet.pointee.flags & sr_pkt_flag_key()) != 0,
               segments.cuts.cutBefore(keyPacketAt: pts), !segmentContents.isEmpty {
                try cutSegment()
            }
            let end = pts + max(0, packet.pointee.duration)
            if let c = segmentContents[index] {
                segmentContents[index] = (min(c.earliest, pts), max(c.end, end), c.timeBase, c.key)
            } else {
                segmentContents[index] = (pts, end, timeBase, (packet.pointee.flags & sr_pkt_flag_key()) != 0)
            }
        }
        if let shift = shifts[index] {
            if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += shift }
            if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += shift }
        }
        if shiftsStarts {
            let start: Int64
            if let known = startShifts[index] {
                start = known
            } else {
                start = packet.pointee.dts != sr_nopts_value() ? max(0, -packet.pointee.dts) : 0
                startShifts[index] = start
            }
            if start != 0 {
                if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += start }
                if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += start }
            }
        }
        av_packet_rescale_ts(packet, timeBase, self.timeBase(ofStream: index))
        if leadMicroseconds > 0 {
            let lead = av_rescale_q(leadMicroseconds, Muxer.microseconds, self.timeBase(ofStream: index))
            if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += lead }
            if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += lead }
        }
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

    /// Ends the segment in progress and hands it over with its report.
    private func cutSegment() throws(SwiftRecordError) {
        guard let segments else { return }
        try flushFragment()
        if !moovWritten {
            // That flush wrote ftyp and moov only (`delay_moov`); this one the fragment.
            moovWritten = true
            try flushFragment()
        }
        let data = segments.output.take()
        let start = segments.cuts.sessionStart ?? .zero
        func time(_ ticks: Int64, _ tb: AVRational) -> MediaTime { MediaTime(value: ticks * Int64(tb.num), timescale: tb.den) }
        let reports = segmentContents.sorted { $0.key < $1.key }.map { stream, c in
            AssetSegmentTrackReport(trackID: Int(stream) + 1, mediaType: segments.mediaTypes[Int(stream)],
                                    earliestPresentationTimeStamp: start + time(c.earliest, c.timeBase),
                                    duration: time(c.end - c.earliest, c.timeBase), startsWithKeyFrame: c.key)
        }
        segmentContents = [:]
        segments.output.deliverSegment(data, report: AssetSegmentReport(segmentType: .separable, trackReports: reports))
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
