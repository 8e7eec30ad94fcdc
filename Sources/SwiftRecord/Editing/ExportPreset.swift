internal import CFFmpeg
import Foundation

/// What a re-encoding preset of `AssetExportSession` makes: the codec, the largest
/// picture (nil: the first picture track's own size) and the rate control. Sound is AAC
/// at the first sound track's rate (a usual one, else 48 kHz), one or two channels.
struct ExportPreset: Sendable {
    let name: String
    let codec: VideoCodec
    /// The box the pictures are fitted into, keeping their aspect; nil: the source's size.
    let box: VideoSize?
    let rateControl: RateControl
    let audioBitRate: Int

    /// The re-encoding presets, with Apple's names. The sizes' bit rates are the writer's
    /// (`OutputSettingsPreset`); the quality presets are this library's choice: low fits
    /// 640×360 at 0.6 Mbit/s, medium 1280×720 at 2.5 Mbit/s, highest keeps the size at CRF 18
    /// (HEVC: CRF 22).
    static let all: [ExportPreset] = [
        ExportPreset(name: AssetExportSession.presetLowQuality, codec: .h264, box: VideoSize(width: 640, height: 360),
                     rateControl: .averageBitRate(600_000), audioBitRate: 64_000),
        ExportPreset(name: AssetExportSession.presetMediumQuality, codec: .h264, box: VideoSize(width: 1280, height: 720),
                     rateControl: .averageBitRate(2_500_000), audioBitRate: 128_000),
        ExportPreset(name: AssetExportSession.presetHighestQuality, codec: .h264, box: nil,
                     rateControl: .constantQuality(18), audioBitRate: 192_000),
        ExportPreset(name: AssetExportSession.presetHEVCHighestQuality, codec: .hevc, box: nil,
                     rateControl: .constantQuality(22), audioBitRate: 192_000),
    ] + OutputSettingsPreset.allCases.map { p in
        ExportPreset(name: p.rawValue.replacingOccurrences(of: "AVOutputSettingsPreset", with: "AVAssetExportPreset"),
                     codec: p.codec, box: VideoSize(width: p.size.width, height: p.size.height),
                     rateControl: .averageBitRate(p.bitRate), audioBitRate: 128_000)
    }

    static func named(_ name: String) -> ExportPreset? { all.first { $0.name == name } }

    /// Whether this FFmpeg has the encoder the preset needs.
    var isAvailable: Bool { EncoderContext.hasEncoder(codec.encoderNames) }

    /// The encoded size for pictures of `source`: fitted inside the box keeping their
    /// aspect, never scaled up (Apple: "the system doesn't scale movies up from a smaller
    /// size"), both sides even (4:2:0).
    func size(for source: VideoSize) -> VideoSize {
        var w = Double(source.width), h = Double(source.height)
        if let box, w > Double(box.width) || h > Double(box.height) {
            let scale = min(Double(box.width) / w, Double(box.height) / h)
            w *= scale
            h *= scale
        }
        func even(_ x: Double) -> Int { max(2, Int((x / 2).rounded()) * 2) }
        return VideoSize(width: even(w), height: even(h))
    }
}

extension AssetExportSession {
    /// A low-quality H.264 + AAC file (`AVAssetExportPresetLowQuality`): fits 640×360, 0.6 Mbit/s.
    public static let presetLowQuality = "AVAssetExportPresetLowQuality"
    /// A medium-quality file (`AVAssetExportPresetMediumQuality`): fits 1280×720, 2.5 Mbit/s.
    public static let presetMediumQuality = "AVAssetExportPresetMediumQuality"
    /// The source's size at a high quality (`AVAssetExportPresetHighestQuality`): H.264 at CRF 18.
    public static let presetHighestQuality = "AVAssetExportPresetHighestQuality"
    /// The source's size in HEVC (`AVAssetExportPresetHEVCHighestQuality`): libx265 at CRF 22.
    public static let presetHEVCHighestQuality = "AVAssetExportPresetHEVCHighestQuality"
    /// Fits 640×480, H.264 (`AVAssetExportPreset640x480`).
    public static let preset640x480 = "AVAssetExportPreset640x480"
    /// Fits 960×540, H.264 (`AVAssetExportPreset960x540`).
    public static let preset960x540 = "AVAssetExportPreset960x540"
    /// Fits 1280×720, H.264 (`AVAssetExportPreset1280x720`).
    public static let preset1280x720 = "AVAssetExportPreset1280x720"
    /// Fits 1920×1080, H.264 (`AVAssetExportPreset1920x1080`).
    public static let preset1920x1080 = "AVAssetExportPreset1920x1080"
    /// Fits 3840×2160, H.264 (`AVAssetExportPreset3840x2160`).
    public static let preset3840x2160 = "AVAssetExportPreset3840x2160"
    /// Fits 1920×1080, HEVC (`AVAssetExportPresetHEVC1920x1080`).
    public static let presetHEVC1920x1080 = "AVAssetExportPresetHEVC1920x1080"
    /// Fits 3840×2160, HEVC (`AVAssetExportPresetHEVC3840x2160`).
    public static let presetHEVC3840x2160 = "AVAssetExportPresetHEVC3840x2160"

    /// The presets this build exports with (`allExportPresets()`): passthrough, and every
    /// re-encoding preset whose encoder this FFmpeg has (the HEVC ones need libx265).
    public static var allExportPresets: [String] {
        [presetPassthrough] + ExportPreset.all.filter(\.isAvailable).map(\.name)
    }

    /// The presets that can export the file at `asset` (`exportPresets(compatibleWith:)`):
    /// none when it does not open; passthrough for any file with pictures or sound; the
    /// re-encoding ones when it has pictures or sound this FFmpeg decodes.
    public static func exportPresets(compatibleWith asset: URL) -> [String] {
        guard let reader = try? AssetReader(url: asset) else { return [] }
        let decodable = reader.tracks.contains { avcodec_find_decoder($0.formatDescription.parameters.pointee.codec_id) != nil }
        return decodable ? allExportPresets : [presetPassthrough]
    }

    /// Whether `presetName` can export `asset` as an `outputFileType` file (`compatibility(ofExportPreset:with:outputFileType:)`).
    public static func compatibility(ofExportPreset presetName: String, with asset: URL, outputFileType: FileType?) -> Bool {
        guard exportPresets(compatibleWith: asset).contains(presetName) else { return false }
        guard let outputFileType else { return true }
        return supportedFileTypes(presetName: presetName, asset: asset).contains(outputFileType)
    }

    /// The containers an export with `presetName` of `asset` can write (`supportedFileTypes`):
    /// a re-encode's H.264/HEVC and AAC go into MP4, MOV and Matroska; a copy into those that
    /// carry the file's codecs.
    static func supportedFileTypes(presetName: String, asset: URL?) -> [FileType] {
        guard presetName == presetPassthrough else {
            let codec = ExportPreset.named(presetName)?.codec ?? .h264
            return FileType.allCases.filter { $0.supports(codec) && $0.supports(AudioCodec.aac) }
        }
        guard let asset, let reader = try? AssetReader(url: asset) else { return [] }
        return FileType.allCases.filter { FormatDescription.canBeCarried(reader.tracks.map(\.formatDescription), in: $0) }
    }

    /// The containers this export can write (`supportedFileTypes`; Apple's is asynchronous
    /// as `compatibleFileTypes`): for a composition, from its first file.
    public var supportedFileTypes: [FileType] {
        AssetExportSession.supportedFileTypes(presetName: presetName, asset: firstFile.map { URL(fileURLWithPath: $0) })
    }
}
