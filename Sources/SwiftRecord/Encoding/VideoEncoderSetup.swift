internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

extension EncoderContext {
    /// The clock of variable-rate input (no `expectedSourceFrameRate`): MPEG's 90 kHz.
    /// Every common frame rate is a whole number of its ticks (24, 25, 30, 50, 60, 120
    /// and the NTSC rates: 30000/1001 s is 3003 ticks), so times taken from a host clock
    /// at such a rate, rounded to the nanosecond, land on exact ticks and the file's
    /// durations are exact; 11 µs is still far finer than any capture jitter.
    static let variableRateTimescale: Int32 = 90_000

    /// The time base for an expected frame rate, and its ticks per frame: one tick a frame;
    /// for frames longer than a tenth of a second, a thousand ticks a frame per frame a
    /// second (1/(1000·rate's numerator) s, at most 1 ms), since the last frame lasts until
    /// the stop, which can come anywhere in a frame (at --fps 1/86400, one tick would be a
    /// day).
    static func frameClock(_ rate: Rational) -> (timeBase: AVRational, ticksPerFrame: Int64) {
        let num = Int64(rate.numerator), den = Int64(rate.denominator)
        if den * 10 > num, num * 1000 <= Int64(Int32.max) {
            return (AVRational(num: 1, den: Int32(num * 1000)), den * 1000)
        }
        return (AVRational(num: rate.denominator, den: rate.numerator), 1)
    }

    /// The frame rate rate control plans for when the input gives no hint. Encoders
    /// derive their per-frame bit budget from `framerate`, or from the time base when it
    /// is unset: at 1/90000 that is a budget for 90,000 frames a second, which starves
    /// the first frames (flat grey pictures) until the rate control has seen enough real
    /// frame durations. With this hint the start is budgeted as for 30 fps; after that
    /// libx264 (which takes variable-rate input by default) and the others follow the
    /// timestamps. The hint is not written to the file.
    static let rateControlFrameRateHint = AVRational(num: 30, den: 1)

    /// libavcodec's picture-size limit: (width + 128) × (height + 128) at most this
    /// (`av_image_check_size`: 8 bytes a sample of padded picture below `INT_MAX`).
    static let largestPaddedPictureArea = Int(Int32.max) / 8

    /// Opens the video encoder `settings` ask for: size, pixel format, rate control,
    /// preset and colour tags, with each library's own spelling of the speed knobs.
    /// `globalHeader`: the container wants parameter sets in extradata (MP4, MOV, MKV).
    static func video(settings: VideoSettings, globalHeader: Bool) throws(SwiftRecordError) -> EncoderContext {
        _ = FFmpegLog.configure
        guard settings.width > 0, settings.height > 0, settings.width <= 16384, settings.height <= 16384 else {
            throw SwiftRecordError(.invalidArgument, operation: "VideoSettings",
                                   message: "size \(settings.width)x\(settings.height) is out of range; expected 1…16384 by 1…16384")
        }
        // FFV1 codes any size; the others need whole chroma samples.
        if settings.codec != .ffv1 && (settings.pixelFormat.chromaShift.x > 0 && settings.width % 2 != 0 || settings.pixelFormat.chromaShift.y > 0 && settings.height % 2 != 0) {
            throw SwiftRecordError(.invalidArgument, operation: "VideoSettings",
                                   message: "size \(settings.width)x\(settings.height) is odd; \(settings.pixelFormat) encoding needs an even width and height")
        }
        // libavcodec refuses larger pictures (av_image_check_size: 8 × (width + 128) ×
        // (height + 128) must stay below 2^31) with a bare "Invalid argument"; say so first.
        if (settings.width + 128) * (settings.height + 128) > EncoderContext.largestPaddedPictureArea {
            let tallest = EncoderContext.largestPaddedPictureArea / (settings.width + 128) - 128
            throw SwiftRecordError(.invalidArgument, operation: "VideoSettings",
                                   message: "size \(settings.width)x\(settings.height) is beyond libavcodec's picture-size limit ((width + 128) × (height + 128) at most \(EncoderContext.largestPaddedPictureArea)); at a width of \(settings.width) the height can be at most \(tallest & ~1), and 16254x16254 is the largest square")
        }
        let clock = settings.expectedSourceFrameRate.flatMap { $0.numerator > 0 ? EncoderContext.frameClock($0) : nil }
        let nominal: Int64? = clock?.ticksPerFrame
        let (owner, codec) = try EncoderContext.allocate(encoderNames: settings.codec.encoderNames, for: settings.codec,
                                                         nominalFrameDuration: nominal)
        let ctx = owner.context, name = owner.name

        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = settings.pixelFormat.av
        let sar = settings.pixelAspectRatio.flatMap { $0.numerator > 0 && $0.denominator > 0 ? $0 : nil }
        ctx.pointee.sample_aspect_ratio = AVRational(num: sar?.numerator ?? 1, den: sar?.denominator ?? 1)
        if let rate = settings.expectedSourceFrameRate, let clock, rate.numerator > 0 {
            ctx.pointee.time_base = clock.timeBase
            ctx.pointee.framerate = AVRational(num: rate.numerator, den: rate.denominator)
        } else {
            ctx.pointee.time_base = AVRational(num: 1, den: EncoderContext.variableRateTimescale)
            ctx.pointee.framerate = EncoderContext.rateControlFrameRateHint
        }
        if let gop = settings.maxKeyFrameInterval, gop > 0 { ctx.pointee.gop_size = Int32(clamping: gop) }
        // 0 is "automatic" (libavcodec's own default is 1: a single-threaded x264).
        ctx.pointee.thread_count = Int32(clamping: max(0, settings.threads ?? 0))
        let color = settings.colorProperties
        if !settings.pixelFormat.isRGB {
            ctx.pointee.color_primaries = color.primaries
            ctx.pointee.color_trc = color.transfer
            ctx.pointee.colorspace = color.matrix
            ctx.pointee.color_range = color.range
        }
        if globalHeader {
            ctx.pointee.flags |= sr_codec_flag_global_header()
        }

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        func set(_ key: String, _ value: String) { av_dict_set(&options, key, value, 0) }

        switch settings.rateControl {
        case .averageBitRate(let bps):
            guard bps > 0 else {
                    throw SwiftRecordError(.invalidArgument, operation: "VideoSettings", message: "average bit rate \(bps) must be positive")
            }
            ctx.pointee.bit_rate = Int64(bps)
        case .constantQuality(let q):
            set("crf", "\(q)")
        case .constantQuantizer(let q):
            switch settings.codec {
            case .h264, .hevc: set("qp", "\(q)")
            default: set("crf", "\(q)")
            }
        case .encoderDefault:
            break
        }

        // Checked here, before the encoder sees it: x264 prints its own "invalid profile"
        // to stderr, whatever the log level.
        let profile = try settings.profile.map { (p) throws(SwiftRecordError) in try VideoProfileLevel(parsing: p, codec: settings.codec) }
        if name == "libx264", case .h264(let p, _)? = profile, p != .high444, settings.isLossless {
            // x264 codes lossless only in High 4:4:4 Predictive ("high profile doesn't support lossless").
            throw SwiftRecordError(.invalidArgument, operation: "VideoSettings",
                                   message: "H.264 \(p) profile cannot code lossless (qp 0, or crf 0 at 8 bits); use the high444 profile (High 4:4:4 Predictive), or no profile")
        }
        let preset = settings.preset
        switch name {
        case "libx264":
            if let preset { set("preset", preset) }
            if let profile {
                set("profile", profile.encoderProfile)
                if let idc = profile.level.h264LevelIDC { ctx.pointee.level = idc }
            }
        case "libx265":
            if let preset { set("preset", preset) }
            if let profile { set("profile", profile.encoderProfile) }
            var params = "log-level=error"
            if case .level(let major, let minor) = profile?.level { params += ":level-idc=\(major).\(minor)" }
            if case .constantQuantizer(0) = settings.rateControl { params += ":lossless=1" }
            set("x265-params", params)
        case "libvpx-vp9":
            // VP9 has no presets; map x264's names to libvpx's speed knobs.
            let speed: [String: (String, Int)] = [
                "ultrafast": ("realtime", 8), "superfast": ("realtime", 8), "veryfast": ("realtime", 7),
                "faster": ("realtime", 6), "fast": ("good", 5), "medium": ("good", 4),
                "slow": ("good", 2), "slower": ("good", 1), "veryslow": ("best", 0),
            ]
            let (deadline, cpu) = speed[preset ?? "veryfast"] ?? ("realtime", 7)
            set("deadline", deadline)
            set("cpu-used", "\(cpu)")
            set("row-mt", "1")
            if case .constantQuantizer(0) = settings.rateControl { set("lossless", "1") }
            if case .constantQuality = settings.rateControl { ctx.pointee.bit_rate = 0 }
        case "libsvtav1":
            // SVT-AV1 prints its configuration to stderr unless told otherwise; keep the
            // library quiet (1 = errors only) unless the user set a level.
            setenv("SVT_LOG", "1", 0)
            let speed: [String: Int] = ["ultrafast": 12, "superfast": 11, "veryfast": 10, "faster": 9,
                                        "fast": 8, "medium": 7, "slow": 5, "slower": 4, "veryslow": 2]
            set("preset", "\(speed[preset ?? "veryfast"] ?? 10)")
        case "libaom-av1":
            set("usage", "realtime")
            set("cpu-used", "8")
            set("row-mt", "1")
        case "ffv1":
            set("level", "3")
            set("slicecrc", "1")
            if settings.threads == nil { ctx.pointee.thread_count = 1 }
        default:
            break
        }
        for (k, v) in settings.encoderOptions { set(k, v) }

        try check(avcodec_open2(ctx, codec, &options), "avcodec_open2(\(name))",
                  hint: "check the preset, profile, size and pixel format (\(settings.width)x\(settings.height) \(settings.pixelFormat))")
        if let leftover = av_dict_get(options, "", nil, sr_dict_ignore_suffix()) {
            let key = String(cString: leftover.pointee.key)
            throw SwiftRecordError(.invalidArgument, operation: "avcodec_open2(\(name))",
                                   message: "the encoder does not know the option '\(key)'")
        }
        if nominal == nil {
            // The rate-control hint has been read by now; the stream is variable-rate and
            // must not be tagged with a rate it may not have.
            ctx.pointee.framerate = AVRational(num: 0, den: 1)
        }
        return owner
    }
}

extension VideoSettings {
    /// Whether the rate control asks x264 for lossless coding: qp 0, or crf 0 at 8 bits
    /// (x264 turns crf 0 into qp 0 there; at 10 bits crf 0 is only very high quality).
    var isLossless: Bool {
        switch rateControl {
        case .constantQuantizer(0): return true
        case .constantQuality(0): return !pixelFormat.rawValue.hasSuffix("10le")
        default: return false
        }
    }
}
