internal import CFFmpeg

extension ChannelLayout {
    /// Channels in FFmpeg's layout `name`, or nil if FFmpeg does not know the name.
    static func channelCount(ofLayoutNamed name: String) -> Int? {
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        guard av_channel_layout_from_string(&layout, name) >= 0, layout.nb_channels > 0 else { return nil }
        return Int(layout.nb_channels)
    }

    /// This layout as FFmpeg's (an unordered count when FFmpeg has no name for it). The
    /// caller uninitialises it.
    func makeAVChannelLayout() -> AVChannelLayout {
        var layout = AVChannelLayout()
        if av_channel_layout_from_string(&layout, name) < 0 || Int(layout.nb_channels) != channelCount {
            av_channel_layout_uninit(&layout)
            av_channel_layout_default(&layout, Int32(channelCount))
        }
        return layout
    }
}

extension AudioFormat.SampleType {
    func avFormat(planar: Bool) -> AVSampleFormat {
        switch (self, planar) {
        case (.s16, false): return AV_SAMPLE_FMT_S16
        case (.s16, true): return AV_SAMPLE_FMT_S16P
        case (.s32, false): return AV_SAMPLE_FMT_S32
        case (.s32, true): return AV_SAMPLE_FMT_S32P
        case (.f32, false): return AV_SAMPLE_FMT_FLT
        case (.f32, true): return AV_SAMPLE_FMT_FLTP
        }
    }
}

extension AudioFormat {
    var avSampleFormat: AVSampleFormat { sampleType.avFormat(planar: isPlanar) }
}
