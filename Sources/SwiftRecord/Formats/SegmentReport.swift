import Foundation

/// What a segment handed to an `AssetWriterDelegate` is (`AVAssetSegmentType`).
public enum AssetSegmentType: Sendable, Hashable {
    /// The initialization segment (`ftyp` and a `moov` without samples): once, before any
    /// other, when the first media segment is complete (the `moov` is written once every
    /// track's first times are known, with an edit list that starts the tracks together).
    case initialization
    /// A media segment (`moof` + `mdat`; FFmpeg 5.1's muxer writes no `styp`, for CMAF
    /// either), playable after the initialization segment and the segments before it.
    case separable
}

/// The profile of the segments a writer made with `AssetWriter(contentType:)` delivers
/// (`AVFileTypeProfile`).
public enum FileTypeProfile: String, Sendable, Hashable {
    /// Fragmented MP4 for HLS (`mpeg4AppleHLS`).
    case mpeg4AppleHLS
    /// Fragmented MP4 that follows CMAF (`mpeg4CMAFCompliant`): libavformat's `cmaf` flag.
    case mpeg4CMAFCompliant
}

/// One track's part of a media segment (`AVAssetSegmentTrackReport`). Times are source
/// times, on the clock of the samples appended (the session's start is where the file's 0 is).
public struct AssetSegmentTrackReport: Sendable, Hashable {
    /// The track's number in the file, from 1 (`trackID`).
    public let trackID: Int
    /// Pictures or sound (`mediaType`).
    public let mediaType: MediaType
    /// The earliest presentation time of the track's samples in the segment (`earliestPresentationTimeStamp`).
    public let earliestPresentationTimeStamp: MediaTime
    /// From the earliest presentation time to the end of the latest sample (`duration`).
    public let duration: MediaTime
    /// Whether the track's first sample in the segment is a key frame.
    public let startsWithKeyFrame: Bool
}

/// What a media segment holds (`AVAssetSegmentReport`): a report per track that has samples in it.
public struct AssetSegmentReport: Sendable, Hashable {
    /// The segment's type (`segmentType`): always `.separable` (no report comes with the initialization segment).
    public let segmentType: AssetSegmentType
    /// The tracks with samples in the segment (`trackReports`).
    public let trackReports: [AssetSegmentTrackReport]
}
