import Foundation

/// A set of output settings `OutputSettingsAssistant` knows (`AVOutputSettingsPreset`),
/// named as Apple names them: the picture size, H.264 unless the name says HEVC.
public enum OutputSettingsPreset: String, Sendable, CaseIterable {
    /// 640×480, H.264 Main, 1.5 Mbit/s.
    case preset640x480 = "AVOutputSettingsPreset640x480"
    /// 960×540, H.264 Main, 2.5 Mbit/s.
    case preset960x540 = "AVOutputSettingsPreset960x540"
    /// 1280×720, H.264 High, 5 Mbit/s.
    case preset1280x720 = "AVOutputSettingsPreset1280x720"
    /// 1920×1080, H.264 High, 8 Mbit/s.
    case preset1920x1080 = "AVOutputSettingsPreset1920x1080"
    /// 3840×2160, H.264 High, 30 Mbit/s.
    case preset3840x2160 = "AVOutputSettingsPreset3840x2160"
    /// 1920×1080, HEVC Main (libx265), 5 Mbit/s.
    case hevc1920x1080 = "AVOutputSettingsPresetHEVC1920x1080"
    /// 3840×2160, HEVC Main (libx265), 18 Mbit/s.
    case hevc3840x2160 = "AVOutputSettingsPresetHEVC3840x2160"

    var size: (width: Int, height: Int) {
        switch self {
        case .preset640x480: (640, 480)
        case .preset960x540: (960, 540)
        case .preset1280x720: (1280, 720)
        case .preset1920x1080, .hevc1920x1080: (1920, 1080)
        case .preset3840x2160, .hevc3840x2160: (3840, 2160)
        }
    }

    var codec: VideoCodec { self == .hevc1920x1080 || self == .hevc3840x2160 ? .hevc : .h264 }

    /// Bits per second: about 0.08 bit a pixel at 30 fps for H.264 at 720p and above, HEVC
    /// about 40 % less for the same picture; the small sizes a little more per pixel.
    var bitRate: Int {
        switch self {
        case .preset640x480: 1_500_000
        case .preset960x540: 2_500_000
        case .preset1280x720: 5_000_000
        case .preset1920x1080: 8_000_000
        case .preset3840x2160: 30_000_000
        case .hevc1920x1080: 5_000_000
        case .hevc3840x2160: 18_000_000
        }
    }

    var profileLevel: String {
        switch self {
        case .preset640x480, .preset960x540: AVVideoProfileLevelH264MainAutoLevel
        case .preset1280x720, .preset1920x1080, .preset3840x2160: AVVideoProfileLevelH264HighAutoLevel
        case .hevc1920x1080, .hevc3840x2160: "HEVC_Main_AutoLevel"
        }
    }
}

/// Output settings for a preset, as Apple-keyed dictionaries for
/// `AssetWriterInput(mediaType:outputSettings:)` (`AVOutputSettingsAssistant`).
///
/// ```swift
/// guard let assistant = OutputSettingsAssistant(preset: .preset1280x720) else { return }
/// let video = try AssetWriterInput(mediaType: .video, outputSettings: assistant.videoSettings!)
/// ```
///
/// Video is H.264 (libx264) or, for the `hevc…` presets, HEVC (libx265), with a key frame
/// at least every 2 seconds; sound is AAC, 48 kHz stereo at 128 kbit/s. The bit rates are
/// this library's choice (see `OutputSettingsPreset`), not Apple's. A preset whose
/// encoder this FFmpeg lacks gives nil, as Apple's does for a preset the device cannot
/// encode; ``AssetWriter/canApply(outputSettings:forMediaType:)`` is then false for its
/// settings too.
///
/// The counterpart of `AVOutputSettingsAssistant` on Apple platforms.
public struct OutputSettingsAssistant: Sendable {
    /// The preset the settings are for.
    public let preset: OutputSettingsPreset

    /// The assistant for `preset` (`init(preset:)`); nil when this FFmpeg has no encoder for its codec.
    public init?(preset: OutputSettingsPreset) {
        guard EncoderContext.hasEncoder(preset.codec.encoderNames) else { return nil }
        self.preset = preset
    }

    /// The presets this FFmpeg can encode (`availableOutputSettingsPresets()`).
    public static func availableOutputSettingsPresets() -> [OutputSettingsPreset] {
        OutputSettingsPreset.allCases.filter { OutputSettingsAssistant(preset: $0) != nil }
    }

    /// The video settings with Apple's keys (`videoSettings`).
    public var videoSettings: [String: Any]? {
        [
            AVVideoCodecKey: preset.codec,
            AVVideoWidthKey: preset.size.width,
            AVVideoHeightKey: preset.size.height,
            AVVideoCompressionPropertiesKey: [
                AVVideoAverageBitRateKey: preset.bitRate,
                AVVideoMaxKeyFrameIntervalDurationKey: 2.0,
                AVVideoProfileLevelKey: preset.profileLevel,
            ] as [String: Any],
        ]
    }

    /// The audio settings with Apple's keys (`audioSettings`): AAC, 48 kHz, stereo, 128 kbit/s.
    public var audioSettings: [String: Any]? {
        [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2, AVEncoderBitRateKey: 128_000]
    }

    /// The container the settings are meant for (`outputFileType`): MP4.
    public var outputFileType: FileType { .mp4 }
}
