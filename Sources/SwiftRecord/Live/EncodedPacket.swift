internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// One encoded packet as a plain Swift value, for a live output's thread: the writing
/// pipeline copies each packet it muxes into the file (the file's own packet is not
/// touched), so no FFmpeg object crosses threads.
struct EncodedPacket: Sendable {
    /// The track (stream index) the packet belongs to: the file's, then the live output's.
    var track: Int
    private(set) var data: [UInt8]
    var pts: Int64, dts: Int64
    let duration: Int64
    let isKey: Bool, isVideo: Bool
    /// The time base of `pts`, `dts` and `duration` (the encoder's).
    let timeBaseNum: Int32
    let timeBaseDen: Int32

    /// A copy of `owner`'s packet (timestamps in `timeBase`).
    init(copying owner: Packet, track: Int, isVideo: Bool, timeBase: Rational) {
        let packet = owner.pointer
        self.track = track
        let size = Int(packet.pointee.size)
        data = size > 0 && packet.pointee.data != nil ? Array(UnsafeBufferPointer(start: packet.pointee.data, count: size)) : []
        pts = packet.pointee.pts
        dts = packet.pointee.dts == sr_nopts_value() ? packet.pointee.pts : packet.pointee.dts
        duration = packet.pointee.duration
        isKey = (packet.pointee.flags & sr_pkt_flag_key()) != 0
        self.isVideo = isVideo
        timeBaseNum = timeBase.numerator
        timeBaseDen = timeBase.denominator
    }

    /// A packet from its parts (`data` only as long as asked: tests and the queue's rules).
    init(track: Int, isVideo: Bool, isKey: Bool, dts: Int64, duration: Int64, timeBase: (num: Int32, den: Int32), size: Int = 0) {
        self.track = track
        data = [UInt8](repeating: 0, count: size)
        pts = dts
        self.dts = dts
        self.duration = duration
        self.isKey = isKey
        self.isVideo = isVideo
        timeBaseNum = timeBase.num
        timeBaseDen = timeBase.den
    }

    /// The same packet without its bytes (a description to keep beside bytes kept elsewhere).
    func withoutData() -> EncodedPacket { withData([]) }

    /// The same packet carrying `data`.
    func withData(_ data: [UInt8]) -> EncodedPacket {
        var copy = self
        copy.data = data
        return copy
    }

    var timeBase: AVRational { AVRational(num: timeBaseNum, den: timeBaseDen) }

    /// The presentation time in microseconds.
    var ptsMicroseconds: Int64 { av_rescale_q(pts, timeBase, AVRational(num: 1, den: 1_000_000)) }

    var durationMicroseconds: Int64 { av_rescale_q(duration, timeBase, AVRational(num: 1, den: 1_000_000)) }

    /// This packet `microseconds` earlier (a clip's times start from its first picture).
    func shifted(byMicroseconds microseconds: Int64) -> EncodedPacket {
        let ticks = av_rescale_q(microseconds, AVRational(num: 1, den: 1_000_000), timeBase)
        var copy = self
        copy.pts -= ticks
        copy.dts -= ticks
        return copy
    }

    /// The decode time in microseconds, for measuring how much a queue holds.
    var dtsMicroseconds: Int64 { av_rescale_q(dts, timeBase, AVRational(num: 1, den: 1_000_000)) }

    /// Makes `packet` a copy of this one (bytes, times, key flag), replacing what it held.
    func copy(into packet: Packet) throws(SwiftRecordError) {
        try packet.set(copying: data)
        let p = packet.pointer
        p.pointee.pts = pts
        p.pointee.dts = dts
        p.pointee.duration = duration
        if isKey { p.pointee.flags |= sr_pkt_flag_key() }
    }
}

/// What a live output needs to describe one track in its own container: the encoder's
/// parameters, copied into Swift values on the pipeline's thread.
struct StreamParameters: Sendable {
    let isVideo: Bool
    let codecID: UInt32
    /// Video: the picture's size; the pixel (video) or sample (audio) format.
    let width: Int32, height: Int32, format: Int32
    /// Audio: sample rate, channel count, samples per packet, priming.
    let sampleRate: Int32, channels: Int32, frameSize: Int32, initialPadding: Int32
    let bitRate: Int64
    let profile: Int32, level: Int32
    let extradata: [UInt8]
    let timeBaseNum: Int32
    let timeBaseDen: Int32
    let frameRateNum: Int32
    let frameRateDen: Int32

    init(_ encoder: EncoderContext) {
        let c = encoder.context.pointee
        isVideo = c.codec_type == AVMEDIA_TYPE_VIDEO
        codecID = c.codec_id.rawValue
        width = c.width
        height = c.height
        format = isVideo ? c.pix_fmt.rawValue : c.sample_fmt.rawValue
        sampleRate = c.sample_rate
        channels = c.ch_layout.nb_channels
        frameSize = c.frame_size
        bitRate = c.bit_rate
        profile = c.profile
        level = c.level
        initialPadding = c.initial_padding
        extradata = c.extradata != nil && c.extradata_size > 0
            ? Array(UnsafeBufferPointer(start: c.extradata, count: Int(c.extradata_size))) : []
        timeBaseNum = c.time_base.num
        timeBaseDen = c.time_base.den
        frameRateNum = c.framerate.num
        frameRateDen = c.framerate.den
    }

    /// A pass-through track's parameters: the source's, its samples' time base.
    init(_ format: FormatDescription) {
        let c = format.parameters.pointee
        isVideo = c.codec_type == AVMEDIA_TYPE_VIDEO
        codecID = c.codec_id.rawValue
        width = c.width
        height = c.height
        self.format = c.format
        sampleRate = c.sample_rate
        channels = c.ch_layout.nb_channels
        frameSize = c.frame_size
        bitRate = c.bit_rate
        profile = c.profile
        level = c.level
        initialPadding = c.initial_padding
        extradata = c.extradata != nil && c.extradata_size > 0
            ? Array(UnsafeBufferPointer(start: c.extradata, count: Int(c.extradata_size))) : []
        timeBaseNum = format.timeBase.num
        timeBaseDen = format.timeBase.den
        frameRateNum = 0
        frameRateDen = 1
    }

    var timeBase: AVRational { AVRational(num: timeBaseNum, den: timeBaseDen) }

    /// Describes a new stream of `context` with these parameters; `priming` false for a
    /// stream cut from the middle of a recording (its first packet is no encoder's first).
    func addStream(to context: UnsafeMutablePointer<AVFormatContext>, priming: Bool = true) throws(SwiftRecordError) {
        guard let stream = avformat_new_stream(context, nil), let par = stream.pointee.codecpar else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        par.pointee.codec_type = isVideo ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        par.pointee.codec_id = AVCodecID(rawValue: codecID)
        par.pointee.format = format
        par.pointee.bit_rate = bitRate
        par.pointee.profile = profile
        par.pointee.level = level
        if isVideo {
            par.pointee.width = width
            par.pointee.height = height
            stream.pointee.avg_frame_rate = AVRational(num: frameRateNum, den: frameRateDen)
        } else {
            par.pointee.sample_rate = sampleRate
            par.pointee.frame_size = frameSize
            par.pointee.initial_padding = priming ? initialPadding : 0
            av_channel_layout_default(&par.pointee.ch_layout, channels)
        }
        if !extradata.isEmpty {
            let padded = extradata.count + Int(sr_input_buffer_padding_size())
            guard let buffer = av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
                throw SwiftRecordError(.ffmpeg, operation: "av_mallocz", message: "out of memory")
            }
            extradata.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { memcpy(buffer, base, source.count) }
            }
            par.pointee.extradata = buffer
            par.pointee.extradata_size = Int32(extradata.count)
        }
        stream.pointee.time_base = timeBase
    }
}

/// What the writing pipeline offers a copy of every packet to: live outputs and replay
/// buffers. `offer` is called on the pipeline's thread and must only queue (take a lock
/// briefly), never write or wait.
protocol PacketSink: Sendable {
    func offer(_ packet: EncodedPacket)
    /// No packet follows (the encoders are drained).
    func endOfStream()
}

extension PacketSink {
    func endOfStream() {}
}
