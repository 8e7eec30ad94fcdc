internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// What a compressed track is: its codec and the parameters a container needs to carry
/// it (size, sample rate, channels, the codec's own configuration record, a subtitle
/// codec's header), and the time
/// base its samples are stamped in. A reader's track hands one out
/// (`AssetReaderTrack.formatDescription`); a pass-through `AssetWriterInput` takes one as
/// its `sourceFormatHint`, so the output's track is described before any sample comes.
///
/// The counterpart of `CMFormatDescription` on Apple platforms.
///
/// `@unchecked Sendable`: the one owner of its `AVCodecParameters` copy, which is made in
/// `init`, never changed, and freed in `deinit`; readers only read it.
public final class FormatDescription: @unchecked Sendable, CustomStringConvertible {
    let parameters: UnsafeMutablePointer<AVCodecParameters>
    /// The time base the samples' ticks count in (the source stream's).
    let timeBase: AVRational
    /// Pictures or sound.
    public let mediaType: MediaType
    /// FFmpeg's name of the codec ("h264", "hevc", "vp9", "aac", "opus", …).
    public let codecName: String

    /// A copy of `parameters`, with samples stamped in `timeBase`; nil for a stream that is
    /// not video, audio or subtitles.
    init?(copying parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational) {
        let type = parameters.pointee.codec_type
        guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_SUBTITLE,
              timeBase.num > 0, timeBase.den > 0,
              let copy = avcodec_parameters_alloc() else { return nil }
        guard avcodec_parameters_copy(copy, parameters) >= 0 else {
            var p: UnsafeMutablePointer<AVCodecParameters>? = copy
            avcodec_parameters_free(&p)
            return nil
        }
        self.parameters = copy
        self.timeBase = timeBase
        mediaType = type == AVMEDIA_TYPE_VIDEO ? .video : type == AVMEDIA_TYPE_AUDIO ? .audio : .subtitle
        codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&p)
    }

    /// Picture size (video); zero for audio.
    public var dimensions: VideoSize {
        VideoSize(width: Int(parameters.pointee.width), height: Int(parameters.pointee.height))
    }
    /// Samples per second (audio); 0 for video.
    public var sampleRate: Int { Int(parameters.pointee.sample_rate) }
    /// Channels (audio); 0 for video.
    public var channelCount: Int { Int(parameters.pointee.ch_layout.nb_channels) }
    /// The unit sample times are stamped in, seconds per tick (`1/1000` for Matroska).
    public var timeScale: Rational? { Rational(timeBase.num, timeBase.den) }

    public var description: String {
        switch mediaType {
        case .video: "\(codecName) \(dimensions)"
        case .audio: "\(codecName) \(sampleRate) Hz \(channelCount) ch"
        case .subtitle: codecName
        }
    }

    /// Whether the codec is text (SubRip, ASS, WebVTT, `mov_text`), which a subtitle
    /// encoder of another text codec can take once decoded; false for pictures (PGS, DVD).
    var isTextSubtitle: Bool {
        guard mediaType == .subtitle, let d = avcodec_descriptor_get(parameters.pointee.codec_id) else { return false }
        return (d.pointee.props & AV_CODEC_PROP_TEXT_SUB) != 0
    }

    /// `time` counted in ticks of the time base (exact when `time` is a whole number of ticks).
    func ticks(_ time: MediaTime) -> Int64? {
        guard time.isNumeric else { return nil }
        let n = Int128(time.value) * Int128(timeBase.den)
        let d = Int128(time.timescale) * Int128(timeBase.num)
        return Int64(exactly: MediaTime.divide(n, by: d, rounding: .toNearest))
    }

    /// `ticks` of the time base as a time (exact).
    func time(ofTicks ticks: Int64) -> MediaTime {
        guard ticks != sr_nopts_value() else { return .invalid }
        let (value, overflow) = ticks.multipliedReportingOverflow(by: Int64(timeBase.num))
        return overflow ? .invalid : MediaTime(value: value, timescale: timeBase.den)
    }
}

extension FormatDescription {
    /// The same codec with the same configuration (what a pass-through track's samples
    /// must share with the format its header was written for).
    func isSameCodec(as other: FormatDescription) -> Bool {
        if self === other { return true }
        let a = parameters.pointee, b = other.parameters.pointee
        guard a.codec_type == b.codec_type, a.codec_id == b.codec_id, a.extradata_size == b.extradata_size else { return false }
        guard a.extradata_size > 0, let x = a.extradata, let y = b.extradata else { return true }
        return memcmp(x, y, Int(a.extradata_size)) == 0
    }
}
