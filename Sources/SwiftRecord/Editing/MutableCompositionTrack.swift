import Foundation

/// One track of a ``MutableComposition`` (`AVMutableCompositionTrack`), edited on its own:
/// stretches of a file's track inserted, emptied or removed in this track only.
///
/// ```swift
/// let composition = MutableComposition()
/// let pictures = composition.addMutableTrack(withMediaType: .video)!
/// let sound = composition.addMutableTrack(withMediaType: .audio)!
/// let video = try AssetReader(url: URL(fileURLWithPath: "screen.mp4")).tracks.first { $0.mediaType == .video }!
/// let voice = try AssetReader(url: URL(fileURLWithPath: "voice.m4a")).tracks.first { $0.mediaType == .audio }!
/// try pictures.insertTimeRange(TimeRange(start: .zero, duration: MediaTime(seconds: 3)), of: video, at: .zero)
/// try sound.insertTimeRange(TimeRange(start: .zero, duration: MediaTime(seconds: 3)), of: voice, at: .zero)
/// ```
///
/// Such a composition is exported with a re-encoding preset (a copy exports whole
/// recordings only, and says so).
public final class MutableCompositionTrack: Sendable {
    /// The composition the track belongs to.
    let composition: MutableComposition
    /// The track's number in the composition (`trackID`).
    public let trackID: Int
    /// Pictures or sound (`mediaType`).
    public let mediaType: MediaType

    init(composition: MutableComposition, trackID: Int, mediaType: MediaType) {
        self.composition = composition
        self.trackID = trackID
        self.mediaType = mediaType
    }

    private func edit<T>(_ body: (inout CompositionTrackContent) throws(SwiftRecordError) -> T) throws(SwiftRecordError) -> T {
        try composition.content.withLock { (c: inout MutableComposition.Content) throws(SwiftRecordError) -> T in
            guard let i = c.tracks.firstIndex(where: { $0.trackID == trackID }) else {
                throw SwiftRecordError(.invalidState, operation: "MutableCompositionTrack", message: "track \(trackID) is no longer in its composition")
            }
            return try body(&c.tracks[i])
        }
    }

    /// Where the track holds something, from 0 (`timeRange`).
    public var timeRange: TimeRange {
        TimeRange(start: .zero, duration: (try? edit { $0.duration }) ?? .zero)
    }

    /// How many stretches the track has (`segments.count`), empty ones included.
    public var segmentCount: Int { (try? edit { $0.segments.count }) ?? 0 }

    /// Inserts `range` of `track` (a track of a file an `AssetReader` opened) at `time`
    /// (`insertTimeRange(_:of:at:)`); a time after the track's end is reached with an empty
    /// stretch. Throws for a track of another kind or a range outside its file.
    public func insertTimeRange(_ range: TimeRange, of track: AssetReaderTrack, at time: MediaTime) throws(SwiftRecordError) {
        guard track.mediaType == mediaType else {
            throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange",
                                   message: "\(track) is \(track.mediaType); this composition track takes \(mediaType)")
        }
        guard let url = track.assetURL else {
            throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange", message: "\(track) does not say which file it is in")
        }
        var length = track.duration ?? .zero
        if track.duration == nil { length = try AssetReader(url: url).duration ?? .zero }
        guard range.start >= .zero, range.duration.isNumeric, range.duration > .zero, range.end <= length, time >= .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange",
                                   message: String(format: "the range %.3f–%.3f s at %.3f s is not inside %@'s track %d (0–%.3f s)",
                                                   range.start.seconds, range.end.seconds, time.seconds, url.path, track.trackID, length.seconds))
        }
        try edit { $0.insert(CompositionSegment(path: url.path, trackID: track.trackID, range: range), at: time) }
    }

    /// Inserts an empty stretch in this track (`insertEmptyTimeRange(_:)`); its start is where it goes.
    public func insertEmptyTimeRange(_ range: TimeRange) throws(SwiftRecordError) {
        guard range.duration.isNumeric, range.duration > .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "insertEmptyTimeRange", message: "the range is empty")
        }
        try edit { $0.insert(.empty(range.duration), at: range.start) }
    }

    /// Removes `range` from this track (`removeTimeRange(_:)`); what was after it moves earlier.
    public func removeTimeRange(_ range: TimeRange) {
        _ = try? edit { $0.remove(range) }
    }
}
