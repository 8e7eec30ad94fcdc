import Foundation

/// Parts of media files laid out on tracks, to export with an ``AssetExportSession``: the
/// joining half of editing (`AVMutableComposition` on Apple platforms).
///
/// ```swift
/// let composition = MutableComposition()
/// try composition.insertTimeRange(nil, of: URL(fileURLWithPath: "a.mp4"), at: composition.duration)
/// try composition.insertTimeRange(nil, of: URL(fileURLWithPath: "b.mp4"), at: composition.duration)
/// let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
/// try await session.export(to: URL(fileURLWithPath: "both.mp4"), as: .mp4)
/// ```
///
/// ``insertTimeRange(_:of:at:)`` inserts a whole recording: its first picture and first
/// sound track go into the composition's first track of each kind (made when missing), and
/// every track moves alike. A single track is edited through a ``MutableCompositionTrack``
/// (``addMutableTrack(withMediaType:preferredTrackID:)``): pictures of one file with the
/// sound of another, say. A copy (passthrough) exports whole recordings only; a re-encoding
/// preset exports any composition, an empty stretch as black pictures and silence.
public final class MutableComposition: Sendable {
    struct Content: Sendable {
        var tracks: [CompositionTrackContent] = []
        var nextInsert = 1
    }
    let content = Locked(Content())

    public init() {}

    /// How long the composition lasts: its longest track.
    public var duration: MediaTime {
        content.withLock { $0.tracks.map(\.duration).max() ?? .zero }
    }

    /// The tracks (`tracks`), in the order they were made.
    public var tracks: [MutableCompositionTrack] {
        content.withLock { $0.tracks.map { MutableCompositionTrack(composition: self, trackID: $0.trackID, mediaType: $0.mediaType) } }
    }

    /// The tracks of one kind (`tracks(withMediaType:)`).
    public func tracks(withMediaType mediaType: MediaType) -> [MutableCompositionTrack] {
        tracks.filter { $0.mediaType == mediaType }
    }

    /// The track numbered `trackID` (`track(withTrackID:)`), or nil.
    public func track(withTrackID trackID: Int) -> MutableCompositionTrack? {
        tracks.first { $0.trackID == trackID }
    }

    /// Adds an empty track of pictures or sound (`addMutableTrack(withMediaType:preferredTrackID:)`);
    /// `preferredTrackID` 0 picks the next free number. Nil for another kind of media or a
    /// number already taken, as Apple's.
    public func addMutableTrack(withMediaType mediaType: MediaType, preferredTrackID: Int = 0) -> MutableCompositionTrack? {
        guard mediaType == .video || mediaType == .audio else { return nil }
        let id: Int? = content.withLock { c in
            let taken = Set(c.tracks.map(\.trackID))
            let id = preferredTrackID > 0 ? preferredTrackID : (taken.max() ?? 0) + 1
            guard !taken.contains(id) else { return nil }
            c.tracks.append(CompositionTrackContent(trackID: id, mediaType: mediaType))
            return id
        }
        return id.map { MutableCompositionTrack(composition: self, trackID: $0, mediaType: mediaType) }
    }

    /// Inserts `range` of `asset` (nil: all of it) at `time` (at most `duration`) into every
    /// track: the file's first picture and sound tracks into the composition's first track of
    /// each kind, an empty stretch into the others. What was at `time` and after moves later
    /// by the range's length.
    public func insertTimeRange(_ range: TimeRange?, of asset: URL, at time: MediaTime) throws(SwiftRecordError) {
        let reader = try AssetReader(url: asset)
        guard let length = reader.duration, length > .zero else {
            throw SwiftRecordError(.invalidData, operation: "insertTimeRange", message: "\(asset.path) does not say how long it is")
        }
        let whole = TimeRange(start: .zero, duration: length)
        let taken = range ?? whole
        guard taken.start >= .zero, taken.duration > .zero, taken.end <= whole.end else {
            throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange",
                                   message: String(format: "the range %.3f–%.3f s is not inside %@ (0–%.3f s)",
                                                   taken.start.seconds, taken.end.seconds, asset.path, length.seconds))
        }
        let kinds = [MediaType.video, .audio].filter { k in reader.tracks.contains { $0.mediaType == k } }
        try content.withLock { (c: inout Content) throws(SwiftRecordError) in
            let end = c.tracks.map(\.duration).max() ?? .zero
            guard time >= .zero, time <= end else {
                throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange",
                                       message: String(format: "inserting at %.3f s, after the composition's end (%.3f s)", time.seconds, end.seconds))
            }
            for kind in kinds where !c.tracks.contains(where: { $0.mediaType == kind }) {
                // A new track lines up with the others: empty where they hold something.
                let id = (c.tracks.map(\.trackID).max() ?? 0) + 1
                let mirror = c.tracks.first?.segments.map { CompositionSegment.empty($0.range.duration, insert: $0.insert) } ?? []
                c.tracks.append(CompositionTrackContent(trackID: id, mediaType: kind, segments: mirror))
            }
            let insert = c.nextInsert
            c.nextInsert += 1
            var filled = Set<MediaType>()
            for i in c.tracks.indices {
                let kind = c.tracks[i].mediaType
                let segment = kinds.contains(kind) && !filled.contains(kind)
                    ? CompositionSegment(path: asset.path, trackID: reader.tracks.first { $0.mediaType == kind }?.trackID, range: taken, insert: insert)
                    : CompositionSegment.empty(taken.duration, insert: insert)
                if segment.path != nil { filled.insert(kind) }
                c.tracks[i].insert(segment, at: time)
            }
        }
    }

    /// Inserts an empty stretch into every track (`insertEmptyTimeRange(_:)`): its start is
    /// where it goes. A copy cannot export one (there is nothing to copy); a re-encoding
    /// preset exports black pictures and silence.
    public func insertEmptyTimeRange(_ range: TimeRange) throws(SwiftRecordError) {
        guard range.duration > .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "insertEmptyTimeRange", message: "the range is empty")
        }
        content.withLock { c in
            for i in c.tracks.indices { c.tracks[i].insert(.empty(range.duration), at: range.start) }
        }
    }

    /// Removes `range` from every track; what was after it moves earlier by its length.
    public func removeTimeRange(_ range: TimeRange) {
        content.withLock { c in
            for i in c.tracks.indices { c.tracks[i].remove(range) }
        }
    }

    /// The tracks an export reads: the first of each kind (a second one is refused, named).
    func exportTracks() throws(SwiftRecordError) -> [CompositionTrackContent] {
        let tracks = content.withLock { $0.tracks }.filter { $0.duration > .zero }
        for kind in [MediaType.video, .audio] where tracks.filter({ $0.mediaType == kind }).count > 1 {
            throw SwiftRecordError(.unsupported, operation: "AssetExportSession",
                                   message: "the composition has \(tracks.filter { $0.mediaType == kind }.count) \(kind) tracks; an export writes one picture and one sound track")
        }
        guard !tracks.isEmpty else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetExportSession", message: "the composition is empty")
        }
        return tracks
    }

    /// The composition as whole recordings one after another, for a copy: every stretch
    /// must come from a whole-recording insert, lined up in every track.
    func pieces() throws(SwiftRecordError) -> [ClipPiece] {
        let tracks = try exportTracks()
        let refusal = "; a copy exports only recordings inserted whole (insertTimeRange(_:of:at:) of the composition); "
            + "a re-encoding preset (\(AssetExportSession.presetHighestQuality)) exports it"
        var pieces: [ClipPiece] = []
        for (i, segment) in tracks[0].segments.enumerated() {
            let row = tracks.map { $0.segments.indices.contains(i) ? $0.segments[i] : nil }
            guard let insert = segment.insert else {
                throw SwiftRecordError(.unsupported, operation: "AssetExportSession",
                                       message: (segment.path == nil ? "the composition has an empty stretch, which a copy cannot export (there is nothing to copy)"
                                                 : "the composition has a single track's insert") + refusal)
            }
            guard row.allSatisfy({ $0?.insert == insert && $0?.range.duration == segment.range.duration }),
                  let part = row.compactMap({ $0 }).first(where: { $0.path != nil }), let path = part.path else {
                throw SwiftRecordError(.unsupported, operation: "AssetExportSession", message: "the composition's tracks do not line up" + refusal)
            }
            pieces.append(ClipPiece(path: path, start: part.range.start, end: part.range.end))
        }
        guard tracks.allSatisfy({ $0.segments.count == tracks[0].segments.count }) else {
            throw SwiftRecordError(.unsupported, operation: "AssetExportSession", message: "the composition's tracks do not line up" + refusal)
        }
        return pieces
    }
}
