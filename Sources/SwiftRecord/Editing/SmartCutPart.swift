internal import CFFmpeg
import Foundation

/// A re-encoded stretch of a smart cut: the pictures at one edge of a cut that a copy cannot
/// carry, decoded from the source and encoded again with libx264 at the source's profile,
/// level, size and pixel format, without B-frames, with parameter sets of their own (id
/// `sequenceSetID`, 1 to 31) that sit beside the source's (id 0) in one sample description.
///
/// - The head: from the cut to the next key frame (or the end), where the copy resumes.
/// - The tail: from the first picture after the last clean point before the end
///   (`SmartCutEnd`) to the end: the copy stops where every picture decoded so far shows
///   before every later one, so no copied picture needs a dropped one.
///
/// Only H.264 with one SPS and one PPS (id 0) can be matched; anything else throws
/// `.unsupported` saying so, for the caller to offer a copy from the key frame or a full
/// re-encode. A lossless source (High 4:4:4 Predictive) is re-encoded losslessly.
struct SmartCutPart {
    /// The encoded pictures, length-prefixed as the source's, their times in the source
    /// stream's time base (presentation = decode: no reordering).
    var samples: [(data: [UInt8], pts: Int64, duration: Int64, key: Bool)] = []
    /// The encoder's SPS and PPS, for the sample description.
    var sequenceSet: [UInt8] = []
    var pictureSet: [UInt8] = []
    /// The head: where the copy resumes (the next key frame's presentation and decode
    /// times), or nil when the pictures were re-encoded to the end.
    var resume: (pts: Int64, dts: Int64)?
    /// How far the copied pictures' decode times run ahead of their presentation (the
    /// source's reordering): the re-encoded ones are decoded as early, so decode times run
    /// on across each seam.
    var lead: Int64 = 0

    /// Where the re-encoded pictures start and end (nil when there are none).
    var span: (start: Int64, end: Int64)? {
        guard let first = samples.first, let last = samples.last else { return nil }
        return (first.pts, last.pts + last.duration)
    }

    static func unmatched(_ why: String) -> SwiftRecordError {
        SwiftRecordError(.unsupported, operation: "exact cut",
                         message: "the pictures cannot be re-encoded to match the copied ones: \(why); cut at the key frames (--copy) or re-encode everything (swift-record convert)")
    }

    /// The source's sample description, if a smart cut can match it: H.264, one SPS and
    /// one PPS, both id 0 (the re-encoded parts take ids 1 to 31).
    static func sourceConfiguration(_ stream: UnsafeMutablePointer<AVStream>) throws(SwiftRecordError) -> AVCConfiguration {
        let par = stream.pointee.codecpar.pointee
        guard par.codec_id == AV_CODEC_ID_H264 else {
            throw unmatched("only H.264 is matched here, and this is \(String(cString: avcodec_get_name(par.codec_id)))")
        }
        let extradata = par.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(par.extradata_size))) } ?? []
        guard let config = AVCConfiguration(extradata), config.sequenceSets.count == 1, config.pictureSets.count == 1,
              AVCConfiguration.sequenceSetID(config.sequenceSets[0]) == 0, AVCConfiguration.pictureSetID(config.pictureSets[0]) == 0 else {
            throw unmatched("its sample description is not one SPS and one PPS with id 0")
        }
        return config
    }

    /// Seeks stream `index` to a key frame from which the picture shown at `ticks` decodes:
    /// an MP4 seeks by decode time, and the key frame decoded last before `ticks` may show
    /// after it (then the one before is taken). A seek that fails reads from the beginning.
    static func seek(_ demuxer: Demuxer, index: Int, before ticks: Int64) throws(SwiftRecordError) {
        var target = ticks
        for _ in 0..<4 {
            guard av_seek_frame(demuxer.context, Int32(index), target, sr_seek_flag_backward()) >= 0 else { break }
            var first: (pts: Int64, dts: Int64)?
            while first == nil, try codecStep(demuxer.read(), "read") == .ok {
                let p = demuxer.packet.pointee
                if Int(p.stream_index) == index { first = (p.pts, p.dts == sr_nopts_value() ? p.pts : p.dts) }
            }
            guard let first, first.pts != sr_nopts_value(), first.pts > ticks, first.dts < target else {
                _ = av_seek_frame(demuxer.context, Int32(index), target, sr_seek_flag_backward())
                return
            }
            target = first.dts - 1
        }
        _ = avformat_seek_file(demuxer.context, -1, Int64.min, Int64.min, Int64.min, 0)
    }

    /// Re-encodes the pictures of stream `index` of `path` shown from `from` until `end`,
    /// all in the stream's time base: the first is the picture shown at `from` (which may
    /// have started before it: the part starts with it). With `untilKeyFrame` (the head) it
    /// stops at the next key frame and says where the copy resumes.
    static func make(path: String, index: Int, from: Int64, end: Int64?, untilKeyFrame: Bool, sequenceSetID: Int,
                     isCancelled: () -> Bool = { false }) throws(SwiftRecordError) -> SmartCutPart {
        let demuxer = try Demuxer(path: path, operation: "open \(path)", kind: .invalidData)
        if !demuxer.formatName.hasPrefix("mov") { try check(demuxer.findStreamInfo(), "open \(path)", kind: .invalidData) }
        guard let stream = demuxer.stream(index) else { throw unmatched("the video stream went away") }
        let config = try sourceConfiguration(stream)
        guard let decoding = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id),
              let encoding = avcodec_find_encoder_by_name("libx264") else {
            throw unmatched("this FFmpeg has no H.264 decoder or no libx264")
        }
        let decoder = try CodecContext(codec: decoding)
        try check(avcodec_parameters_to_context(decoder.pointer, stream.pointee.codecpar), "avcodec_parameters_to_context")
        // Every core (decoding is exact whatever the threads): the pictures before the cut's
        // are decoded too, from the key frame before it.
        decoder.pointer.pointee.thread_count = 0
        try check(avcodec_open2(decoder.pointer, decoding, nil), "open the H.264 decoder")
        // Opened at the first picture: its pixel format is the decoder's (an MP4 read without
        // probing does not say it).
        var opened: EncoderContext?
        func encoder(for frame: UnsafeMutablePointer<AVFrame>) throws(SwiftRecordError) -> EncoderContext {
            if let opened { return opened }
            let made = try openEncoder(encoding, like: stream, format: frame.pointee.format, profile: Int32(config.head[1]),
                                       level: Int32(config.head[3]), sequenceSetID: sequenceSetID)
            opened = made
            return made
        }
        let frameTicks = stream.pointee.avg_frame_rate.num > 0 ? av_rescale_q(1, av_inv_q(stream.pointee.avg_frame_rate), stream.pointee.time_base) : 1
        try seek(demuxer, index: index, before: from)
        var part = SmartCutPart()
        let frame = try Frame(), out = try Packet()
        var limit = end ?? Int64.max
        var seenStart = false
        func drainEncoder() throws(SwiftRecordError) {
            while let encoder = opened, try encoder.receive(out.pointer) == .ok {
                let p = out.pointer.pointee
                let bytes = p.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(p.size))) } ?? []
                let units = AVCConfiguration.annexBUnits(bytes).filter { u in u.first.map { $0 & 0x1F != 7 && $0 & 0x1F != 8 } ?? false }
                part.samples.append((config.sample(units), p.pts, p.duration, (p.flags & sr_pkt_flag_key()) != 0))
                out.unref()
            }
        }
        // The picture shown at `from`: the last one starting at or before it, held until
        // the next shows it ended, then encoded at its own time (pictures stay on the
        // source's frame grid, so parts joined after one another do too).
        let shown = try Frame()
        var holding = false
        func encode(_ f: UnsafeMutablePointer<AVFrame>, at pts: Int64) throws(SwiftRecordError) {
            f.pointee.pts = pts
            f.pointee.pict_type = seenStart ? AV_PICTURE_TYPE_NONE : AV_PICTURE_TYPE_I
            seenStart = true
            _ = try codecStep(avcodec_send_frame(try encoder(for: f).context, f), "encode the cut's pictures")
            try drainEncoder()
        }
        func releaseShown() throws(SwiftRecordError) {
            guard holding else { return }
            holding = false
            try encode(shown.pointer, at: shown.pointer.pointee.best_effort_timestamp)
            shown.unref()
        }
        func drainDecoder() throws(SwiftRecordError) {
            while try codecStep(avcodec_receive_frame(decoder.pointer, frame.pointer), "decode \(path)") == .ok {
                let pts = frame.pointer.pointee.best_effort_timestamp
                if pts <= from {
                    shown.unref()
                    try check(av_frame_ref(shown.pointer, frame.pointer), "av_frame_ref")
                    holding = true
                } else if pts < limit {
                    try releaseShown()
                    try encode(frame.pointer, at: pts)
                }
                frame.unref()
            }
        }
        while true {
            if isCancelled() { throw SwiftRecordError(.cancelled, operation: "export", message: "stopped while re-encoding the pictures at a cut") }
            guard try codecStep(demuxer.read(), "read \(path)") == .ok else { break }
            let p = demuxer.packet
            guard Int(p.pointee.stream_index) == index else { continue }
            let key = (p.pointee.flags & sr_pkt_flag_key()) != 0
            let dts = p.pointee.dts == sr_nopts_value() ? p.pointee.pts : p.pointee.dts
            if untilKeyFrame && key {
                // A cut inside a key frame's display needs no re-encoding: the copy starts there.
                let shownFor = p.pointee.duration > 0 ? p.pointee.duration : frameTicks
                if p.pointee.pts <= from && from < p.pointee.pts + shownFor {
                    return SmartCutPart(resume: (p.pointee.pts, dts), lead: p.pointee.pts - dts)
                }
                if p.pointee.pts > from && part.resume == nil && p.pointee.pts < limit {
                    // The next key frame: the copy resumes there, if a decoder can start at it.
                    let units = AVCConfiguration.lengthPrefixedUnits(p.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(p.pointee.size))) } ?? [],
                                                                     lengthSize: config.lengthSize)
                    guard units.contains(where: { ($0.first ?? 0) & 0x1F == 5 }) else {
                        throw unmatched("the key frame after the cut is not an IDR picture (an open group of pictures)")
                    }
                    part.resume = (p.pointee.pts, dts)
                    part.lead = p.pointee.pts - dts
                    limit = p.pointee.pts
                    break
                }
            }
            _ = try codecStep(avcodec_send_packet(decoder.pointer, p), "decode \(path)")
            try drainDecoder()
            if dts >= limit { break }
        }
        _ = try codecStep(avcodec_send_packet(decoder.pointer, nil), "decode \(path)")
        try drainDecoder()
        try releaseShown()
        guard let encoder = opened else {
            throw SwiftRecordError(.invalidData, operation: "exact cut", message: "no picture could be decoded from the cut on")
        }
        _ = try codecStep(avcodec_send_frame(encoder.context, nil), "encode the cut's pictures")
        try drainEncoder()
        for unit in AVCConfiguration.annexBUnits(encoder.extradata) {
            switch (unit.first ?? 0) & 0x1F {
            case 7: part.sequenceSet = unit
            case 8: part.pictureSet = unit
            default: break
            }
        }
        guard AVCConfiguration.sequenceSetID(part.sequenceSet) == sequenceSetID,
              AVCConfiguration.pictureSetID(part.pictureSet) == sequenceSetID else {
            throw unmatched("libx264 gave no parameter sets of its own (id \(sequenceSetID))")
        }
        part.samples.sort { $0.pts < $1.pts }
        for i in part.samples.indices where part.samples[i].duration <= 0 { part.samples[i].duration = frameTicks }
        return part
    }

    /// libx264 set up as the source's encoder was: profile, level, size, pixel format and
    /// colour, no B-frames, parameter sets under `sequenceSetID`, lossless for a lossless profile.
    private static func openEncoder(_ codec: UnsafePointer<AVCodec>, like stream: UnsafeMutablePointer<AVStream>, format: Int32,
                                    profile idc: Int32, level: Int32, sequenceSetID: Int) throws(SwiftRecordError) -> EncoderContext {
        let par = stream.pointee.codecpar.pointee
        let (encoder, _) = try EncoderContext.allocate(encoderNames: ["libx264"], for: "H.264", nominalFrameDuration: nil)
        let c = encoder.context
        c.pointee.width = par.width
        c.pointee.height = par.height
        c.pointee.pix_fmt = AVPixelFormat(rawValue: format)
        c.pointee.time_base = stream.pointee.time_base
        c.pointee.framerate = stream.pointee.avg_frame_rate
        c.pointee.sample_aspect_ratio = par.sample_aspect_ratio
        c.pointee.color_range = par.color_range
        c.pointee.color_primaries = par.color_primaries
        c.pointee.color_trc = par.color_trc
        c.pointee.colorspace = par.color_space
        c.pointee.max_b_frames = 0
        c.pointee.gop_size = 100_000
        // Every core: the re-encoded pictures are most of an exact cut's time (no test compares their bytes).
        c.pointee.thread_count = 0
        c.pointee.flags |= sr_codec_flag_global_header()
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let profiles: [Int32: String] = [66: "baseline", 77: "main", 100: "high", 110: "high10", 122: "high422", 244: "high444"]
        // The profile and level from the sample description (profile_idc, level_idc): an MP4's
        // header says them even where the stream's parameters were not probed.
        guard let profile = profiles[idc] else {
            throw unmatched("its H.264 profile (profile_idc \(idc)) is not one libx264 encodes")
        }
        av_dict_set(&options, "profile", profile, 0)
        if level > 0 { av_dict_set(&options, "level", "\(level / 10).\(level % 10)", 0) }
        av_dict_set(&options, "x264-params", "sps-id=\(sequenceSetID)", 0)
        // High 4:4:4 Predictive is the profile of lossless H.264: keep every sample.
        if idc == 244 { av_dict_set(&options, "qp", "0", 0) } else { av_dict_set(&options, "crf", "12", 0) }
        try check(avcodec_open2(c, codec, &options), "open libx264 for the cut's pictures")
        return encoder
    }
}
