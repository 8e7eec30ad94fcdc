internal import CFFmpeg

extension EncoderContext {
    /// Opens the audio encoder `settings` ask for, in the sample format it likes best
    /// (planar float for AAC, float or 16-bit for Opus), time base 1/sample rate.
    static func audio(settings: AudioSettings, globalHeader: Bool) throws(SwiftRecordError) -> EncoderContext {
        _ = FFmpegLog.configure
        try settings.format.validate("AudioSettings")
        guard settings.bitRate > 0, settings.bitRate <= 2_000_000 else {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSettings",
                                   message: "bit rate \(settings.bitRate) is out of range; expected 1…2000000 bits per second")
        }
        if settings.codec == .opus, ![8_000, 12_000, 16_000, 24_000, 48_000].contains(settings.sampleRate) {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSettings",
                                   message: "Opus encodes at 48000 Hz (or 8000, 12000, 16000, 24000), not \(settings.sampleRate)")
        }
        let (owner, codec) = try EncoderContext.allocate(encoderNames: settings.codec.encoderNames, for: settings.codec,
                                                         nominalFrameDuration: nil)
        let ctx = owner.context, name = owner.name
        ctx.pointee.sample_rate = Int32(settings.sampleRate)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(settings.sampleRate))
        ctx.pointee.bit_rate = Int64(settings.bitRate)
        var layout = settings.channelLayout.makeAVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        try check(av_channel_layout_copy(&ctx.pointee.ch_layout, &layout), "av_channel_layout_copy")
        ctx.pointee.sample_fmt = preferredSampleFormat(of: codec)
        if globalHeader { ctx.pointee.flags |= sr_codec_flag_global_header() }
        try check(avcodec_open2(ctx, codec, nil), "avcodec_open2(\(name))",
                  hint: "check the sample rate, channels and bit rate (\(settings.sampleRate) Hz \(settings.channelLayout), \(settings.bitRate) b/s)")
        return owner
    }

    /// Planar float, else float, else 16-bit, else whatever the encoder lists first.
    private static func preferredSampleFormat(of codec: UnsafePointer<AVCodec>) -> AVSampleFormat {
        guard let list = codec.pointee.sample_fmts else { return AV_SAMPLE_FMT_FLTP }
        var formats: [AVSampleFormat] = []
        var i = 0
        while list[i] != AV_SAMPLE_FMT_NONE { formats.append(list[i]); i += 1 }
        for wanted in [AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_S16] where formats.contains(wanted) {
            return wanted
        }
        return formats.first ?? AV_SAMPLE_FMT_FLTP
    }

    /// Samples per frame the encoder wants, or nil when it takes any count.
    var audioFrameSize: Int? {
        let variable = (context.pointee.codec.pointee.capabilities & sr_codec_cap_variable_frame_size()) != 0
        return variable || context.pointee.frame_size <= 0 ? nil : Int(context.pointee.frame_size)
    }

    /// Whether the last frame may be shorter than `audioFrameSize`.
    var acceptsShortLastFrame: Bool {
        (context.pointee.codec.pointee.capabilities & sr_codec_cap_small_last_frame()) != 0
    }
}
