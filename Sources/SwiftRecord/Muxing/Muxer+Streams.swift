internal import CFFmpeg

/// A muxer's streams: what each carries (an encoder's output, or compressed samples as they
/// are), its tags and its display matrix.
extension Muxer {
    /// Adds a stream carrying `encoder`'s output, tagged with `metadata`; returns its index.
    func addStream(for encoder: EncoderContext, transform: VideoTransform, metadata: [String: String] = [:]) throws(SwiftRecordError) -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        for (key, value) in trackTags(metadata).sorted(by: { $0.key < $1.key }) {
            try check(av_dict_set(&stream.pointee.metadata, key, value, 0), "av_dict_set(\(key))")
        }
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder.context), "avcodec_parameters_from_context")
        stream.pointee.time_base = encoder.context.pointee.time_base
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
    fileprivate func setDisplayMatrix(of stream: UnsafeMutablePointer<AVStream>, _ transform: VideoTransform) throws(SwiftRecordError) {
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

    /// Bytes of a MOV track's name (`handler_name`) that are written: MOV stores it as a
    /// Pascal string (a length byte), and FFmpeg reads a length of 128 or more as a
    /// character of the name (a U+FFFD first), while 256 or more no longer fits the byte.
    static let movTrackNameBytes = 127

    /// `metadata` as a stream of this output can carry it: a MOV track's name longer than
    /// `movTrackNameBytes` is cut there, at a character's end, and the cut is logged. MP4
    /// and Matroska carry names of any length.
    func trackTags(_ metadata: [String: String]) -> [String: String] {
        guard String(cString: context.pointee.oformat.pointee.name) == "mov",
              let name = metadata["handler_name"], name.utf8.count > Muxer.movTrackNameBytes else { return metadata }
        var cut = ""
        for c in name.unicodeScalars {
            guard cut.utf8.count + String(c).utf8.count <= Muxer.movTrackNameBytes else { break }
            cut.unicodeScalars.append(c)
        }
        Log.writer.warning("a .mov track's name holds at most \(Muxer.movTrackNameBytes) bytes (a Pascal string that FFmpeg reads wrongly from 128 on): the track '\(cut.prefix(24))…' is named by its first \(cut.utf8.count) bytes of \(name.utf8.count); .mp4 and .mkv keep the whole name")
        var tags = metadata
        tags["handler_name"] = cut
        return tags
    }
}

extension Muxer {
    /// `trackTags` for a stream whose tags were copied from another file's (a repair).
    func fitTrackName(of stream: UnsafeMutablePointer<AVStream>) {
        guard let entry = av_dict_get(stream.pointee.metadata, "handler_name", nil, 0) else { return }
        let name = String(cString: entry.pointee.value)
        guard let fitted = trackTags(["handler_name": name])["handler_name"], fitted != name else { return }
        av_dict_set(&stream.pointee.metadata, "handler_name", fitted, 0)
    }
}

extension Muxer {
    /// Gives a copied compressed audio stream that does not say its frame size (a demuxer's
    /// Opus, AC3, FLAC) one, where libavformat's MP4/MOV muxer would warn "codec frame size
    /// is not set": the codec's fixed samples per frame where it has one (AC3 1536, MP3
    /// 1152), which MOV writes as its samples per packet; else a 20 ms frame, Opus's usual
    /// (for a codec of variable frames the muxer only needs to know the sound is not PCM:
    /// any size above 1 writes the same file).
    static func fillFrameSize(of parameters: UnsafeMutablePointer<AVCodecParameters>) {
        let par = parameters.pointee
        guard par.codec_type == AVMEDIA_TYPE_AUDIO, par.frame_size == 0, av_get_bits_per_sample(par.codec_id) == 0 else { return }
        let fixed = av_get_audio_frame_duration2(parameters, 0)
        parameters.pointee.frame_size = fixed > 1 ? fixed : max(2, par.sample_rate / 50)
    }
}
