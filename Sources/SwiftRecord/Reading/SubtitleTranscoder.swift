internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Turns a text subtitle track into another text codec, packet for packet, where the
/// output's container cannot carry the input's (SubRip or ASS into MP4's `mov_text`,
/// `mov_text` into Matroska's SubRip, anything into WebM's WebVTT): each packet is decoded
/// to its text (`avcodec_decode_subtitle2`) and encoded again (`avcodec_encode_subtitle`).
/// The times are the packet's own, in the input's time base, so they stay exact; styling
/// the target codec has no room for is lost. Owns its decoder and encoder; used on the
/// conversion thread only, not `Sendable`.
final class SubtitleTranscoder {
    private let decoder: CodecContext
    private let encoder: CodecContext
    /// The encoded track's format, for the writer's pass-through input.
    let format: FormatDescription
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private let path: String

    /// The codec each container takes subtitles as, when it cannot take the input's.
    static func textCodec(for fileType: FileType) -> String {
        switch fileType {
        case .mp4, .mov: "mov_text"
        case .webm: "webvtt"
        case .mkv: "subrip"
        }
    }

    /// A transcoder of `source` (a text subtitle track) to the encoder `codecName`; throws
    /// when this FFmpeg has no such decoder or encoder, or either does not open.
    init(from source: FormatDescription, to codecName: String, path: String) throws(SwiftRecordError) {
        self.path = path
        guard let decoding = avcodec_find_decoder(source.parameters.pointee.codec_id) else {
            throw SwiftRecordError(.unsupported, operation: "convert \(path)", message: "this FFmpeg has no \(source.codecName) subtitle decoder")
        }
        guard let encoding = avcodec_find_encoder_by_name(codecName) else {
            throw SwiftRecordError(.unsupported, operation: "convert \(path)", message: "this FFmpeg has no \(codecName) subtitle encoder")
        }
        decoder = try CodecContext(codec: decoding)
        let dec = decoder.pointer
        try check(avcodec_parameters_to_context(dec, source.parameters), "avcodec_parameters_to_context")
        dec.pointee.pkt_timebase = source.timeBase
        try check(avcodec_open2(dec, decoding, nil), "convert \(path): open the \(source.codecName) subtitle decoder")
        encoder = try CodecContext(codec: encoding)
        let enc = encoder.pointer
        enc.pointee.time_base = source.timeBase
        // The text encoders take their styles from the ASS header every text decoder makes.
        if let header = dec.pointee.subtitle_header, dec.pointee.subtitle_header_size > 0 {
            let size = Int(dec.pointee.subtitle_header_size)
            guard let copy = av_mallocz(size + 1)?.assumingMemoryBound(to: UInt8.self) else {
                throw SwiftRecordError(.ffmpeg, operation: "av_mallocz", message: "out of memory")
            }
            copy.update(from: header, count: size)
            enc.pointee.subtitle_header = copy
            enc.pointee.subtitle_header_size = Int32(size)
        }
        try check(avcodec_open2(enc, encoding, nil), "convert \(path): open the \(codecName) subtitle encoder")
        guard let parameters = avcodec_parameters_alloc() else {
            throw SwiftRecordError(.ffmpeg, operation: "avcodec_parameters_alloc", message: "out of memory")
        }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        try check(avcodec_parameters_from_context(parameters, enc), "avcodec_parameters_from_context")
        guard let format = FormatDescription(copying: parameters, timeBase: source.timeBase) else {
            throw SwiftRecordError(.ffmpeg, operation: "convert \(path)", message: "the \(codecName) encoder gave no subtitle parameters")
        }
        self.format = format
    }

    /// `sample` in the target codec, at the same times; nil for a packet that shows nothing
    /// (an empty `mov_text` sample, which only clears the previous one: the output's own
    /// durations say as much).
    func transcode(_ sample: CompressedSampleBuffer) throws(SwiftRecordError) -> CompressedSampleBuffer? {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        try check(avcodec_decode_subtitle2(decoder.pointer, &subtitle, &got, sample.storage.packet),
                  "convert \(path): decode a \(sample.formatDescription.codecName) subtitle at \(sample.presentationTimeStamp)",
                  kind: .invalidData)
        guard got != 0 else { return nil }
        defer { avsubtitle_free(&subtitle) }
        guard subtitle.num_rects > 0 else { return nil }
        let written = buffer.withUnsafeMutableBufferPointer { b in
            avcodec_encode_subtitle(encoder.pointer, b.baseAddress, Int32(b.count), &subtitle)
        }
        try check(written, "convert \(path): encode the subtitle at \(sample.presentationTimeStamp) as \(format.codecName)")
        guard written > 0 else { return nil }
        let storage = try PacketStorage(copying: Array(buffer[0..<Int(written)]))
        let p = storage.packet
        p.pointee.pts = sample.ptsTicks
        p.pointee.dts = sample.dtsTicks
        p.pointee.duration = sample.durationTicks
        // A packet without a duration (a demuxer's last) lasts as long as its text says.
        if p.pointee.duration <= 0, subtitle.end_display_time > subtitle.start_display_time, subtitle.end_display_time != UInt32.max {
            p.pointee.duration = av_rescale_q(Int64(subtitle.end_display_time - subtitle.start_display_time),
                                              AVRational(num: 1, den: 1000), format.timeBase)
        }
        p.pointee.flags |= sr_pkt_flag_key()
        return CompressedSampleBuffer(storage: storage, formatDescription: format)
    }
}
