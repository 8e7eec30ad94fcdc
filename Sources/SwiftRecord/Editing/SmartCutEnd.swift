internal import CFFmpeg
import Foundation

/// Where a copy of pictures can stop before a cut's end: the last clean point, after which
/// the pictures up to the end are re-encoded (the smart cut's tail, a `SmartCutPart`).
///
/// With B-frames a picture shown before the end may be decoded after one shown past it,
/// which it needs: a copy that stops at the end either drops a picture another needs or
/// shows one too many. A clean point is a place in decode order where every picture decoded
/// before it shows before every picture decoded after it (with libx264's B-frames, after
/// each mini-group: P B B B): the pictures before the last such point that shows before the
/// end are copied, those from it to the end re-encoded (a few, starting with an IDR picture
/// that needs nothing before it).
struct SmartCutEnd {
    /// The first picture not copied (presentation time).
    let copyEnd: Int64
    /// How far the copied pictures' decode times run ahead of presentation at the seam.
    let lead: Int64

    /// The tail of a cut of stream `index` of `path` ending at `end` (stream ticks), or nil
    /// when the copy can stop at `end` exactly (no picture shown past it decodes before one
    /// shown before it) or the stream ends before.
    static func find(path: String, index: Int, end: Int64) throws(SwiftRecordError) -> SmartCutEnd? {
        let demuxer = try Demuxer(path: path, operation: "open \(path)", kind: .invalidData)
        if !demuxer.formatName.hasPrefix("mov") { try check(demuxer.findStreamInfo(), "open \(path)", kind: .invalidData) }
        guard let stream = demuxer.stream(index) else { return nil }
        let rate = stream.pointee.avg_frame_rate
        let frameTicks = rate.num > 0 && rate.den > 0 ? max(1, av_rescale_q(1, av_inv_q(rate), stream.pointee.time_base)) : 1
        try SmartCutPart.seek(demuxer, index: index, before: end)
        // The pictures from the key frame before the end to the first decoded at or after it.
        var pictures: [(pts: Int64, dts: Int64)] = []
        while try codecStep(demuxer.read(), "read \(path)") == .ok {
            let p = demuxer.packet.pointee
            guard Int(p.stream_index) == index, p.pts != sr_nopts_value() else { continue }
            let dts = p.dts == sr_nopts_value() ? p.pts : p.dts
            pictures.append((p.pts, dts))
            if dts >= end { break }
        }
        return plan(pictures, end: end, frameTicks: frameTicks)
    }

    /// The decision on `pictures` (decode order, from a key frame; the last one decoded at or
    /// after `end`, or the stream's last): a pure function of times, tested on its own.
    static func plan(_ pictures: [(pts: Int64, dts: Int64)], end: Int64, frameTicks: Int64) -> SmartCutEnd? {
        guard !pictures.isEmpty else { return nil }
        // suffixMin[i]: the earliest picture shown among those decoded from i on.
        var suffixMin = [Int64](repeating: .max, count: pictures.count + 1)
        for i in pictures.indices.reversed() { suffixMin[i] = min(suffixMin[i + 1], pictures[i].pts) }
        var best: Int?
        var shownBefore = Int64.min
        // i pictures copied: clean when all shown before `end` and before every later one.
        for i in 0...pictures.count {
            if i > 0 { shownBefore = max(shownBefore, pictures[i - 1].pts) }
            guard shownBefore < end else { break }
            if shownBefore < suffixMin[i] { best = i }
        }
        guard let copied = best, copied < pictures.count else { return nil }
        let copyEnd = suffixMin[copied]
        // Nothing shown before `end` comes after the clean point: the copy is exact by itself.
        if copyEnd >= end { return nil }
        let lead = copied > 0 ? copyEnd - pictures[copied - 1].dts - frameTicks : pictures[0].pts - pictures[0].dts
        return SmartCutEnd(copyEnd: copyEnd, lead: max(0, lead))
    }
}
