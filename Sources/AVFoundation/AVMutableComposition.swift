import Foundation

/// One track of a media file (`AVAssetTrack`): a thin wrapper over SwiftRecord's
/// `AssetReaderTrack` (``assetReaderTrack``), which knows its file.
public final class AVAssetTrack: Sendable {
    /// The SwiftRecord track underneath.
    public let assetReaderTrack: AssetReaderTrack

    init(_ track: AssetReaderTrack) { assetReaderTrack = track }

    public var trackID: CMPersistentTrackID { CMPersistentTrackID(assetReaderTrack.trackID) }
    public var mediaType: AVMediaType { assetReaderTrack.mediaType }
    public var naturalSize: CGSize { CGSize(width: assetReaderTrack.naturalSize.width, height: assetReaderTrack.naturalSize.height) }
    public var timeRange: CMTimeRange { CMTimeRange(start: .zero, duration: assetReaderTrack.duration ?? .zero) }
}

/// A track's number in its asset (`CMPersistentTrackID`).
public typealias CMPersistentTrackID = Int32
/// "Pick a number" for `addMutableTrack(withMediaType:preferredTrackID:)` (`kCMPersistentTrackID_Invalid`).
public let kCMPersistentTrackID_Invalid: CMPersistentTrackID = 0

extension AVURLAsset {
    /// The file's tracks of `mediaType` (`loadTracks(withMediaType:)`); throws when the file does not open.
    public func loadTracks(withMediaType mediaType: AVMediaType) async throws -> [AVAssetTrack] {
        try AssetReader(url: url).tracks.filter { $0.mediaType == mediaType }.map(AVAssetTrack.init)
    }

    /// The file's tracks of `mediaType` (`tracks(withMediaType:)`, deprecated by Apple); none when the file does not open.
    public func tracks(withMediaType mediaType: AVMediaType) -> [AVAssetTrack] {
        ((try? AssetReader(url: url))?.tracks ?? []).filter { $0.mediaType == mediaType }.map(AVAssetTrack.init)
    }
}

/// Parts of files laid out on tracks (`AVMutableComposition`): a thin wrapper over
/// SwiftRecord's `MutableComposition` (``mutableComposition``).
public final class AVMutableComposition: Sendable {
    /// The SwiftRecord composition underneath.
    public let mutableComposition = MutableComposition()

    public init() {}

    public var duration: CMTime { mutableComposition.duration }

    public var tracks: [AVMutableCompositionTrack] { mutableComposition.tracks.map(AVMutableCompositionTrack.init) }

    /// Adds an empty track (`addMutableTrack(withMediaType:preferredTrackID:)`); nil for a
    /// kind other than video or audio, or a number already taken.
    public func addMutableTrack(withMediaType mediaType: AVMediaType, preferredTrackID: CMPersistentTrackID) -> AVMutableCompositionTrack? {
        mutableComposition.addMutableTrack(withMediaType: mediaType, preferredTrackID: Int(preferredTrackID)).map(AVMutableCompositionTrack.init)
    }

    /// Inserts `timeRange` of `asset` at `startTime`; throws for a range outside the file.
    public func insertTimeRange(_ timeRange: CMTimeRange, of asset: AVURLAsset, at startTime: CMTime) throws {
        try mutableComposition.insertTimeRange(timeRange, of: asset.url, at: startTime)
    }

    /// An empty stretch (an empty range is ignored, as Apple's; any other refusal is logged,
    /// Apple's method having no way to throw).
    public func insertEmptyTimeRange(_ timeRange: CMTimeRange) {
        do {
            try mutableComposition.insertEmptyTimeRange(timeRange)
        } catch {
            warnUnlessEmpty(timeRange, "AVMutableComposition", error)
        }
    }

    public func removeTimeRange(_ timeRange: CMTimeRange) {
        mutableComposition.removeTimeRange(timeRange)
    }
}

/// One track of a composition (`AVMutableCompositionTrack`): a thin wrapper over
/// SwiftRecord's `MutableCompositionTrack` (``mutableCompositionTrack``).
public final class AVMutableCompositionTrack: Sendable {
    /// The SwiftRecord track underneath.
    public let mutableCompositionTrack: MutableCompositionTrack

    init(_ track: MutableCompositionTrack) { mutableCompositionTrack = track }

    public var trackID: CMPersistentTrackID { CMPersistentTrackID(mutableCompositionTrack.trackID) }
    public var mediaType: AVMediaType { mutableCompositionTrack.mediaType }
    public var timeRange: CMTimeRange { mutableCompositionTrack.timeRange }

    /// Inserts `timeRange` of `track` at `startTime`; throws for a track of another kind or a range outside it.
    public func insertTimeRange(_ timeRange: CMTimeRange, of track: AVAssetTrack, at startTime: CMTime) throws {
        try mutableCompositionTrack.insertTimeRange(timeRange, of: track.assetReaderTrack, at: startTime)
    }

    /// An empty stretch in this track (an empty range is ignored; any other refusal, such as
    /// a track removed from its composition, is logged).
    public func insertEmptyTimeRange(_ timeRange: CMTimeRange) {
        do {
            try mutableCompositionTrack.insertEmptyTimeRange(timeRange)
        } catch {
            warnUnlessEmpty(timeRange, "AVMutableCompositionTrack", error)
        }
    }

    public func removeTimeRange(_ timeRange: CMTimeRange) {
        mutableCompositionTrack.removeTimeRange(timeRange)
    }
}

/// Apple's `insertEmptyTimeRange(_:)` cannot throw: an empty range is quietly nothing, as
/// there; any other refusal goes to the log rather than nowhere.
private func warnUnlessEmpty(_ range: CMTimeRange, _ type: String, _ error: SwiftRecordError) {
    guard !(range.duration.isNumeric && range.duration <= .zero) else { return }
    log.warning("\(type).insertEmptyTimeRange(_:) did nothing: \(error.message)")
}
