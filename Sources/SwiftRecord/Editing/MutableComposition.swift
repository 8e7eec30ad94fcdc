import Foundation

/// Parts of media files laid end to end, to export with an ``AssetExportSession``: the
/// joining half of editing (`AVMutableComposition` on Apple platforms, with its tracks
/// taken together: every part brings its pictures and its sound).
///
/// ```swift
/// let composition = MutableComposition()
/// try composition.insertTimeRange(nil, of: URL(fileURLWithPath: "a.mp4"), at: composition.duration)
/// try composition.insertTimeRange(nil, of: URL(fileURLWithPath: "b.mp4"), at: composition.duration)
/// let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
/// try await session.export(to: URL(fileURLWithPath: "both.mp4"), as: .mp4)
/// ```
public final class MutableComposition: Sendable {
    /// One part: `range` of the file at `path` (nil path: an empty stretch).
    struct Part: Sendable {
        var path: String?
        var range: TimeRange
    }
    private let parts = Locked<[Part]>([])

    public init() {}

    /// How long the composition lasts: its parts' lengths added.
    public var duration: MediaTime {
        parts.withLock { $0.reduce(MediaTime.zero) { $0 + $1.range.duration } }
    }

    /// Inserts `range` of `asset` (nil: all of it) at `time` (at most `duration`); what was
    /// at `time` and after moves later by the range's length.
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
        try insert(Part(path: asset.path, range: taken), at: time)
    }

    /// Inserts an empty stretch (`AVMutableComposition.insertEmptyTimeRange(_:)`): its start is
    /// where it goes. A copy cannot export one (there is nothing to copy); the export says so.
    public func insertEmptyTimeRange(_ range: TimeRange) throws(SwiftRecordError) {
        guard range.duration > .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "insertEmptyTimeRange", message: "the range is empty")
        }
        try insert(Part(path: nil, range: TimeRange(start: .zero, duration: range.duration)), at: range.start)
    }

    /// Removes `range`; what was after it moves earlier by its length.
    public func removeTimeRange(_ range: TimeRange) {
        parts.withLock { parts in
            var out: [Part] = []
            var at = MediaTime.zero
            for part in parts {
                let end = at + part.range.duration
                let cutFrom = max(range.start, at), cutTo = min(range.end, end)
                if cutFrom >= cutTo {
                    out.append(part)
                } else {
                    if cutFrom > at { out.append(Part(path: part.path, range: TimeRange(start: part.range.start, duration: cutFrom - at))) }
                    if cutTo < end { out.append(Part(path: part.path, range: TimeRange(start: part.range.start + (cutTo - at), end: part.range.end))) }
                }
                at = end
            }
            parts = out
        }
    }

    private func insert(_ part: Part, at time: MediaTime) throws(SwiftRecordError) {
        try parts.withLock { (parts: inout [Part]) throws(SwiftRecordError) in
            var at = MediaTime.zero
            for (i, p) in parts.enumerated() {
                let end = at + p.range.duration
                if time == at {
                    parts.insert(part, at: i)
                    return
                }
                if time < end {
                    // Split the part `time` falls inside.
                    let head = Part(path: p.path, range: TimeRange(start: p.range.start, duration: time - at))
                    let tail = Part(path: p.path, range: TimeRange(start: p.range.start + (time - at), end: p.range.end))
                    parts.replaceSubrange(i...i, with: [head, part, tail])
                    return
                }
                at = end
            }
            guard time == at else {
                throw SwiftRecordError(.invalidArgument, operation: "insertTimeRange",
                                       message: String(format: "inserting at %.3f s, after the composition's end (%.3f s)", time.seconds, at.seconds))
            }
            parts.append(part)
        }
    }

    /// The parts as pieces to copy; an empty stretch cannot be copied.
    func pieces() throws(SwiftRecordError) -> [ClipPiece] {
        let parts = parts.withLock { $0 }
        guard !parts.isEmpty else {
            throw SwiftRecordError(.invalidArgument, operation: "AssetExportSession", message: "the composition is empty")
        }
        return try parts.map { (p) throws(SwiftRecordError) in
            guard let path = p.path else {
                throw SwiftRecordError(.unsupported, operation: "AssetExportSession",
                                       message: "the composition has an empty stretch, which a copy cannot export (there is nothing to copy)")
            }
            return ClipPiece(path: path, start: p.range.start, end: p.range.end)
        }
    }
}
