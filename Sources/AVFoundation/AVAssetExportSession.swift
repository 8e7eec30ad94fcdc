import Foundation

/// Copies every packet as it is (`AVAssetExportPresetPassthrough`).
public let AVAssetExportPresetPassthrough = AssetExportSession.presetPassthrough
/// Low quality, fits 640×360 (`AVAssetExportPresetLowQuality`).
public let AVAssetExportPresetLowQuality = AssetExportSession.presetLowQuality
/// Medium quality, fits 1280×720 (`AVAssetExportPresetMediumQuality`).
public let AVAssetExportPresetMediumQuality = AssetExportSession.presetMediumQuality
/// The source's size, H.264 (`AVAssetExportPresetHighestQuality`).
public let AVAssetExportPresetHighestQuality = AssetExportSession.presetHighestQuality
/// The source's size, HEVC (`AVAssetExportPresetHEVCHighestQuality`).
public let AVAssetExportPresetHEVCHighestQuality = AssetExportSession.presetHEVCHighestQuality
/// Fits 640×480, H.264 (`AVAssetExportPreset640x480`).
public let AVAssetExportPreset640x480 = AssetExportSession.preset640x480
/// Fits 960×540, H.264 (`AVAssetExportPreset960x540`).
public let AVAssetExportPreset960x540 = AssetExportSession.preset960x540
/// Fits 1280×720, H.264 (`AVAssetExportPreset1280x720`).
public let AVAssetExportPreset1280x720 = AssetExportSession.preset1280x720
/// Fits 1920×1080, H.264 (`AVAssetExportPreset1920x1080`).
public let AVAssetExportPreset1920x1080 = AssetExportSession.preset1920x1080
/// Fits 3840×2160, H.264 (`AVAssetExportPreset3840x2160`).
public let AVAssetExportPreset3840x2160 = AssetExportSession.preset3840x2160
/// Fits 1920×1080, HEVC (`AVAssetExportPresetHEVC1920x1080`).
public let AVAssetExportPresetHEVC1920x1080 = AssetExportSession.presetHEVC1920x1080
/// Fits 3840×2160, HEVC (`AVAssetExportPresetHEVC3840x2160`).
public let AVAssetExportPresetHEVC3840x2160 = AssetExportSession.presetHEVC3840x2160

/// A media file named by its URL (`AVURLAsset`): what an export session or a composition takes.
public final class AVURLAsset: Sendable {
    public let url: URL

    /// `options` are accepted and ignored (Apple's are loading and caching hints).
    public init(url: URL, options: [String: any Sendable]? = nil) {
        self.url = url
    }
}

/// `AVAsset(url:)` makes the same asset as `AVURLAsset(url:)`.
public typealias AVAsset = AVURLAsset

/// Exports an asset or a composition (`AVAssetExportSession`): a thin wrapper over
/// SwiftRecord's `AssetExportSession` (``assetExportSession``).
public final class AVAssetExportSession: Sendable {
    public typealias Status = AssetExportSession.Status

    /// The SwiftRecord session underneath (``AssetExportSession/overwritesExistingFile``,
    /// ``AssetExportSession/keyFrameStart``).
    public let assetExportSession: AssetExportSession

    /// Nil when the file does not open or the preset is not available (logged with the reason).
    public init?(asset: AVURLAsset, presetName: String) {
        do {
            assetExportSession = try AssetExportSession(asset: asset.url, presetName: presetName)
        } catch {
            log.warning("AVAssetExportSession(asset:presetName:) returned nil: \(error.message)")
            return nil
        }
    }

    /// Nil when the composition cannot be exported with the preset (logged with the reason).
    public init?(asset: AVMutableComposition, presetName: String) {
        do {
            assetExportSession = try AssetExportSession(composition: asset.mutableComposition, presetName: presetName)
        } catch {
            log.warning("AVAssetExportSession(asset:presetName:) returned nil: \(error.message)")
            return nil
        }
    }

    /// The presets this build has: passthrough and the re-encoding ones its FFmpeg can encode.
    public class func allExportPresets() -> [String] { AssetExportSession.allExportPresets }

    /// The presets that can export `asset` (`exportPresets(compatibleWith:)`).
    public class func exportPresets(compatibleWith asset: AVURLAsset) -> [String] {
        AssetExportSession.exportPresets(compatibleWith: asset.url)
    }

    /// Whether `presetName` can export `asset` as `outputFileType` (`compatibility(ofExportPreset:with:outputFileType:)`).
    public class func compatibility(ofExportPreset presetName: String, with asset: AVURLAsset, outputFileType: AVFileType?) async -> Bool {
        AssetExportSession.compatibility(ofExportPreset: presetName, with: asset.url, outputFileType: outputFileType)
    }

    /// The containers this export can write (`supportedFileTypes`).
    public var supportedFileTypes: [AVFileType] { assetExportSession.supportedFileTypes }

    /// Tags written to the output (`metadata`); nil: a copy carries the source's.
    public var metadata: [AVMetadataItem]? {
        get { assetExportSession.metadata?.items }
        set { assetExportSession.metadata = newValue.map { AssetMetadata($0) } }
    }

    /// Where an export is (`AVAssetExportSession.State`), as `states(updateInterval:)` hands it out.
    public enum State: Sendable {
        case pending
        case waiting
        /// Writing; `progress.fractionCompleted` from 0 to 1.
        case exporting(progress: Progress)
    }

    /// The export's states every `updateInterval` seconds, until it ends (`states(updateInterval:)`).
    public func states(updateInterval: TimeInterval) -> AsyncMapSequence<AsyncStream<AssetExportSession.State>, State> {
        assetExportSession.states(updateInterval: updateInterval).map { state in
            switch state {
            case .pending: return .pending
            case .waiting: return .waiting
            case .exporting(let fraction):
                let progress = Progress(totalUnitCount: 1000)
                progress.completedUnitCount = Int64((fraction * 1000).rounded())
                return .exporting(progress: progress)
            }
        }
    }

    public var presetName: String { assetExportSession.presetName }
    public var outputURL: URL? {
        get { assetExportSession.outputURL }
        set { assetExportSession.outputURL = newValue }
    }
    public var outputFileType: AVFileType? {
        get { assetExportSession.outputFileType }
        set { assetExportSession.outputFileType = newValue }
    }
    public var timeRange: CMTimeRange {
        get { assetExportSession.timeRange }
        set { assetExportSession.timeRange = newValue }
    }
    public var status: Status { assetExportSession.status }
    public var error: (any Error)? { assetExportSession.error }
    public var progress: Float { assetExportSession.progress }

    public func export(to url: URL, as fileType: AVFileType) async throws {
        try await assetExportSession.export(to: url, as: fileType)
    }

    public func exportAsynchronously(completionHandler handler: @escaping @Sendable () -> Void) {
        assetExportSession.exportAsynchronously(completionHandler: handler)
    }

    public func cancelExport() { assetExportSession.cancelExport() }
}
