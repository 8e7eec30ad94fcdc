internal import CFFmpeg

/// A video codec an `AssetWriterInput` can encode to (`AVVideoCodecType`).
public enum VideoCodec: String, Sendable, CaseIterable, CustomStringConvertible {
    /// H.264 / AVC through libx264 (`AVVideoCodecType.h264`).
    case h264
    /// H.265 / HEVC through libx265 (`AVVideoCodecType.hevc`).
    case hevc
    /// VP9 through libvpx-vp9.
    case vp9
    /// AV1 through SVT-AV1 (or libaom when SVT-AV1 is missing).
    case av1
    /// FFV1, mathematically lossless, for archiving (Matroska only).
    case ffv1

    public var description: String { rawValue }

    /// FFmpeg encoder names to try, best first.
    var encoderNames: [String] {
        switch self {
        case .h264: return ["libx264"]
        case .hevc: return ["libx265"]
        case .vp9: return ["libvpx-vp9"]
        case .av1: return ["libsvtav1", "libaom-av1", "librav1e"]
        case .ffv1: return ["ffv1"]
        }
    }
}

/// Colour primaries, transfer function, matrix and range, tagged in the stream so
/// players show the colours that were meant (`AVVideoColorPropertiesKey`).
public struct ColorProperties: Sendable, Hashable {
    /// The colour standard: primaries, transfer function and matrix together.
    public enum Standard: String, Sendable {
        /// HD video (ITU-R BT.709): what players assume for HD and screen recordings.
        case bt709
        /// SD video (ITU-R BT.601, as SMPTE 170M).
        case bt601
        /// UHD and HDR video (ITU-R BT.2020, non-constant luminance, 10-bit transfer).
        case bt2020
    }
    /// The primaries, transfer function and matrix.
    public var standard: Standard
    /// Full range (0–255) instead of limited / video range (16–235).
    public var fullRange: Bool

    /// Colour properties: BT.709, limited range, unless told otherwise.
    public init(standard: Standard = .bt709, fullRange: Bool = false) {
        self.standard = standard
        self.fullRange = fullRange
    }

    /// BT.709, limited range: what every player and browser expects of HD video.
    public static let bt709 = ColorProperties()

    var primaries: AVColorPrimaries {
        switch standard {
        case .bt709: return AVCOL_PRI_BT709
        case .bt601: return AVCOL_PRI_SMPTE170M
        case .bt2020: return AVCOL_PRI_BT2020
        }
    }
    var transfer: AVColorTransferCharacteristic {
        switch standard {
        case .bt709: return AVCOL_TRC_BT709
        case .bt601: return AVCOL_TRC_SMPTE170M
        case .bt2020: return AVCOL_TRC_BT2020_10
        }
    }
    var matrix: AVColorSpace {
        switch standard {
        case .bt709: return AVCOL_SPC_BT709
        case .bt601: return AVCOL_SPC_SMPTE170M
        case .bt2020: return AVCOL_SPC_BT2020_NCL
        }
    }
    var range: AVColorRange { fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG }
}

/// How an encoder spends bits.
public enum RateControl: Sendable, Hashable {
    /// Aim for an average bit rate in bits per second (`AVVideoAverageBitRateKey`).
    case averageBitRate(Int)
    /// Constant quality (x264/x265 CRF, VP9/AV1 CRF): lower is better, 0 is lossless for x264 in 8-bit.
    case constantQuality(Int)
    /// Constant quantiser; `constantQuantizer(0)` with H.264 is mathematically lossless.
    case constantQuantizer(Int)
    /// The encoder's own default.
    case encoderDefault
}

/// Typed video output settings for an `AssetWriterInput`: the counterpart of the
/// `outputSettings` dictionary (`AVVideoCodecKey`, `AVVideoWidthKey`,
/// `AVVideoCompressionPropertiesKey`, …) on Apple platforms.
public struct VideoSettings: Sendable, Hashable {
    /// The codec (`AVVideoCodecKey`).
    public var codec: VideoCodec
    /// Width of the encoded picture in pixels (`AVVideoWidthKey`); 4:2:0 and 4:2:2 need it even.
    public var width: Int
    /// Height of the encoded picture in pixels (`AVVideoHeightKey`); 4:2:0 needs it even.
    public var height: Int
    /// Pixel format handed to the encoder. `yuv420p` plays everywhere.
    public var pixelFormat: PixelFormat
    /// How the encoder spends bits: an average bit rate (`AVVideoAverageBitRateKey`), a constant
    /// quality or quantiser, or its own default.
    public var rateControl: RateControl
    /// Largest distance between key frames in frames (`AVVideoMaxKeyFrameIntervalKey`); nil: encoder default.
    public var maxKeyFrameInterval: Int?
    /// Largest distance between key frames in seconds (`AVVideoMaxKeyFrameIntervalDurationKey`):
    /// a frame that far from the last key frame is made one. What keeps key frames coming
    /// at a content-driven frame rate, where frames are far apart. nil: no limit in time.
    public var maxKeyFrameIntervalDuration: Double?
    /// The frame rate the source delivers (`AVVideoExpectedSourceFrameRateKey`). When set, the
    /// stream's time base is 1/rate, which gives a constant-frame-rate file; times are
    /// rounded to that grid. When nil, times are kept on MPEG's 90 kHz clock (variable
    /// rate), on which every common frame rate is a whole number of ticks.
    public var expectedSourceFrameRate: Rational?
    /// Codec profile, e.g. "high", "main", "baseline" for H.264 (`AVVideoProfileLevelKey`).
    public var profile: String?
    /// Encoder preset, x264's names: ultrafast … veryslow (mapped for VP9 and AV1).
    public var preset: String?
    /// Encoder threads; nil or 0 lets the encoder choose.
    public var threads: Int?
    /// Colour standard and range, tagged in the stream (`AVVideoColorPropertiesKey`).
    public var colorProperties: ColorProperties
    /// Extra encoder options passed through as FFmpeg `AVOption`s (e.g. `["tune": "zerolatency"]`).
    public var encoderOptions: [String: String]
    /// The shape of a pixel, width:height (`AVVideoPixelAspectRatioKey`); nil: square.
    public var pixelAspectRatio: Rational? = nil

    /// Settings for a `width`×`height` encoder: H.264 in yuv420p, BT.709, with the encoder's own
    /// rate control, key-frame interval and preset unless told otherwise.
    public init(codec: VideoCodec = .h264, width: Int, height: Int, pixelFormat: PixelFormat = .yuv420p,
                rateControl: RateControl = .encoderDefault, maxKeyFrameInterval: Int? = nil,
                expectedSourceFrameRate: Rational? = nil, profile: String? = nil, preset: String? = nil,
                threads: Int? = nil, colorProperties: ColorProperties = .bt709, encoderOptions: [String: String] = [:]) {
        self.codec = codec
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.rateControl = rateControl
        self.maxKeyFrameInterval = maxKeyFrameInterval
        self.expectedSourceFrameRate = expectedSourceFrameRate
        self.profile = profile
        self.preset = preset
        self.threads = threads
        self.colorProperties = colorProperties
        self.encoderOptions = encoderOptions
    }

    /// Convenience for the common case: average bit rate in bits per second.
    public var averageBitRate: Int? {
        get { if case .averageBitRate(let b) = rateControl { return b } else { return nil } }
        set { rateControl = newValue.map { .averageBitRate($0) } ?? .encoderDefault }
    }
}

/// The container an `AssetWriter` writes (`AVFileType`).
public enum FileType: String, Sendable, CaseIterable, CustomStringConvertible {
    /// MPEG-4 (`.mp4`, `.m4v`; `AVFileType.mp4`).
    case mp4
    /// QuickTime (`.mov`; `AVFileType.mov`).
    case mov
    /// Matroska (`.mkv`): every codec here.
    case mkv
    /// WebM (`.webm`): VP9 and AV1 video, Opus sound.
    case webm

    public var description: String { rawValue }

    /// The file type for a path's extension (`.m4v` counts as MP4), or nil.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "mp4", "m4v": self = .mp4
        case "mov", "qt": self = .mov
        case "mkv": self = .mkv
        case "webm": self = .webm
        default: return nil
        }
    }

    var muxerName: String {
        switch self {
        case .mp4: return "mp4"
        case .mov: return "mov"
        case .mkv: return "matroska"
        case .webm: return "webm"
        }
    }

    /// The video codec a file of this type gets when none is chosen: H.264, VP9 in WebM.
    /// The one rule of `record` and `convert` (README, "What it records").
    public var defaultVideoCodec: VideoCodec { supports(VideoCodec.h264) ? .h264 : .vp9 }

    /// Codecs the container can carry.
    public func supports(_ codec: VideoCodec) -> Bool {
        switch self {
        case .mp4: return codec != .ffv1
        case .mov: return codec == .h264 || codec == .hevc
        case .mkv: return true
        case .webm: return codec == .vp9 || codec == .av1
        }
    }
}
