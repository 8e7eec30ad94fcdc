internal import CFFmpeg

/// One opened libavcodec encoder (`AVCodecContext`), whatever the media type. Its one
/// owner is a `TrackEncoder`, which lives on the writing pipeline's thread; the type is
/// not `Sendable`.
final class EncoderContext {
    /// Owns the codec context (`CodecContext`); `context` is its pointer.
    private let owner: CodecContext
    let context: UnsafeMutablePointer<AVCodecContext>
    /// FFmpeg's name of the encoder ("libx264", "aac", …), for messages.
    let name: String
    /// Ticks of the time base per frame at the expected rate, or nil for variable-rate input.
    let nominalFrameDuration: Int64?

    private init(owner: CodecContext, name: String, nominalFrameDuration: Int64?) {
        self.owner = owner
        self.context = owner.pointer
        self.name = name
        self.nominalFrameDuration = nominalFrameDuration
    }

    /// A fresh, unopened context of the first of `encoderNames` this FFmpeg has (the
    /// object owns it from here on: a throw while configuring frees it with the object).
    static func allocate(encoderNames: [String], for codec: CustomStringConvertible,
                         nominalFrameDuration: Int64?) throws(SwiftRecordError) -> (EncoderContext, UnsafePointer<AVCodec>) {
        guard let (found, name) = encoderNames.lazy.compactMap({ n in avcodec_find_encoder_by_name(n).map { ($0, n) } }).first else {
            throw SwiftRecordError(.unsupported, operation: "avcodec_find_encoder_by_name",
                                   message: "no encoder for \(codec) in this FFmpeg (tried \(encoderNames.joined(separator: ", ")))")
        }
        return (EncoderContext(owner: try CodecContext(codec: found), name: name, nominalFrameDuration: nominalFrameDuration), found)
    }

    /// Whether this FFmpeg has one of `encoderNames`.
    static func hasEncoder(_ encoderNames: [String]) -> Bool {
        encoderNames.contains { avcodec_find_encoder_by_name($0) != nil }
    }

    /// The unit of the frames' and packets' ticks.
    var timeBase: Rational { Rational(context.pointee.time_base) }

    /// An audio encoder's priming: the samples it puts before the first one sent (AAC's
    /// 1024, Opus's pre-skip), in ticks of `timeBase`; 0 for video.
    var priming: Int64 { Int64(context.pointee.initial_padding) }

    /// The parameter sets the encoder put in extradata (global header), or none.
    var extradata: [UInt8] {
        let c = context.pointee
        guard let data = c.extradata, c.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(c.extradata_size)))
    }
    var frameRate: AVRational { context.pointee.framerate }

    /// Hands a frame to the encoder, or nil to flush it.
    func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(SwiftRecordError) -> CodecStep {
        try codecStep(avcodec_send_frame(context, frame), "avcodec_send_frame(\(name))")
    }

    /// Takes the next encoded packet, if one is ready.
    func receive(_ packet: UnsafeMutablePointer<AVPacket>) throws(SwiftRecordError) -> CodecStep {
        try codecStep(avcodec_receive_packet(context, packet), "avcodec_receive_packet(\(name))")
    }
}
