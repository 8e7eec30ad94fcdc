import Foundation

/// One stretch of a composition track: `range` of a track of the file at `path` (the
/// file's first track of the kind, or `trackID`), or an empty stretch (`path` nil) as long
/// as `range`.
struct CompositionSegment: Sendable, Equatable {
    var path: String?
    var trackID: Int?
    var range: TimeRange
    /// The whole-recording insert it came from (`insertTimeRange(_:of:at:)` of the
    /// composition): stretches of the same insert line up in every track, which is what a
    /// copy needs; nil for a single track's insert or an empty stretch.
    var insert: Int?

    static func empty(_ duration: MediaTime, insert: Int? = nil) -> CompositionSegment {
        CompositionSegment(path: nil, trackID: nil, range: TimeRange(start: .zero, duration: duration), insert: insert)
    }
}

/// One track of a composition, or of what an export reads: its kind and its stretches
/// laid end to end from 0.
struct CompositionTrackContent: Sendable {
    let trackID: Int
    let mediaType: MediaType
    var segments: [CompositionSegment] = []

    var duration: MediaTime { segments.reduce(MediaTime.zero) { $0 + $1.range.duration } }

    /// Inserts `segment` at `time`; a time after the end is reached with an empty stretch.
    /// What was at `time` and after moves later by the segment's length.
    mutating func insert(_ segment: CompositionSegment, at time: MediaTime) {
        var at = MediaTime.zero
        for (i, s) in segments.enumerated() {
            let end = at + s.range.duration
            if time == at {
                segments.insert(segment, at: i)
                return
            }
            if time < end {
                var head = s, tail = s
                head.range = TimeRange(start: s.range.start, duration: time - at)
                tail.range = TimeRange(start: s.range.start + (time - at), end: s.range.end)
                segments.replaceSubrange(i...i, with: [head, segment, tail])
                return
            }
            at = end
        }
        if time > at { segments.append(.empty(time - at)) }
        segments.append(segment)
    }

    /// Takes `range` out; what was after it moves earlier by its length.
    mutating func remove(_ range: TimeRange) {
        var out: [CompositionSegment] = []
        var at = MediaTime.zero
        let rangeEnd: MediaTime? = range.duration.isNumeric ? range.end : nil
        for s in segments {
            let end = at + s.range.duration
            let cutFrom = max(range.start, at), cutTo = rangeEnd.map { min($0, end) } ?? end
            if cutFrom >= cutTo {
                out.append(s)
            } else {
                if cutFrom > at {
                    var head = s
                    head.range = TimeRange(start: s.range.start, duration: cutFrom - at)
                    out.append(head)
                }
                if cutTo < end {
                    var tail = s
                    tail.range = TimeRange(start: s.range.start + (cutTo - at), end: s.range.end)
                    out.append(tail)
                }
            }
            at = end
        }
        segments = out
    }

    /// The part `range` covers, moved to start at 0.
    func cut(to range: TimeRange) -> CompositionTrackContent {
        var copy = self
        if range.duration.isNumeric { copy.remove(TimeRange(start: range.end, duration: .positiveInfinity)) }
        if range.start > .zero { copy.remove(TimeRange(start: .zero, duration: range.start)) }
        return copy
    }
}

extension CompositionTrackContent {
    /// The first picture and first sound track of the file at `path`, each one stretch of
    /// the whole file: an asset exported with a re-encoding preset.
    static func wholeFile(_ path: String) throws(SwiftRecordError) -> [CompositionTrackContent] {
        let reader = try AssetReader(url: URL(fileURLWithPath: path))
        var out: [CompositionTrackContent] = []
        for kind in [MediaType.video, .audio] {
            guard let track = reader.tracks.first(where: { $0.mediaType == kind }) else { continue }
            guard let length = reader.duration ?? track.duration, length > .zero else {
                throw SwiftRecordError(.invalidData, operation: "export", message: "\(path) does not say how long it is")
            }
            let segment = CompositionSegment(path: path, trackID: track.trackID, range: TimeRange(start: .zero, duration: length))
            out.append(CompositionTrackContent(trackID: out.count + 1, mediaType: kind, segments: [segment]))
        }
        return out
    }
}
