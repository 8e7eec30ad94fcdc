import Foundation

/// Copies every packet as it is (`AVAssetExportPresetPassthrough`): the one preset of this build.
public let AVAssetExportPresetPassthrough = AssetExportSession.presetPassthrough

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

/// Parts of files laid end to end (`AVMutableComposition`), its tracks taken together: a
/// thin wrapper over SwiftRecord's `MutableComposition` (``mutableComposition``).
public final class AVMutableComposition: Sendable {
    /// The SwiftRecord composition underneath.
    public let mutableComposition = MutableComposition()

    public init() {}

    public var duration: CMTime { mutableComposition.duration }

    /// Inserts `timeRange` of `asset` at `startTime`; throws for a range outside the file.
    public func insertTimeRange(_ timeRange: CMTimeRange, of asset: AVURLAsset, at startTime: CMTime) throws {
        try mutableComposition.insertTimeRange(timeRange, of: asset.url, at: startTime)
    }

    /// An empty stretch (an empty range is ignored, as Apple's).
    public func insertEmptyTimeRange(_ timeRange: CMTimeRange) {
        try? mutableComposition.insertEmptyTimeRange(timeRange)
    }

    public func removeTimeRange(_ timeRange: CMTimeRange) {
        mutableComposition.removeTimeRange(timeRange)
    }
}

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

    /// The presets this build has: passthrough only.
    public class func allExportPresets() -> [String] { AssetExportSession.allExportPresets }

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
