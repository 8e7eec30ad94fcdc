internal import CFFmpeg

extension MediaFileReader {
    /// How many video frames a reader of the file at `path` finds: the complete packets of
    /// its first video stream, read without decoding (a cut-off last packet does not
    /// count). Nil when the file cannot be opened as media at all (an MP4 without its
    /// index, a file with no video): nothing usable is there.
    package static func videoFrameCount(path: String) -> Int? {
        guard let input = Demuxer(path: path), let stream = input.firstStream(AVMEDIA_TYPE_VIDEO) else { return nil }
        let p = input.packet
        var count = 0
        while input.read() >= 0 {
            if Int(p.pointee.stream_index) == stream && (p.pointee.flags & sr_pkt_flag_corrupt()) == 0 && p.pointee.size > 0 {
                count += 1
            }
        }
        return count
    }
}

extension MediaFileReader {
    /// How long the first audio track of the file at `path` lasts, in seconds, as a reader
    /// finds it (`audioTracksSeconds`). Nil when the file cannot be opened or has no audio track.
    package static func audioTrackSeconds(path: String) -> Double? {
        audioTracksSeconds(path: path)?.first
    }

    /// How long each audio track of the file at `path` lasts, in seconds, in stream order,
    /// as a reader finds it: from its first packet's time to the end of its last (durations
    /// from the packets, the priming an edit list hides left out by the demuxer). Nil when
    /// the file cannot be opened; empty when it has no audio.
    package static func audioTracksSeconds(path: String) -> [Double]? {
        guard let input = Demuxer(path: path) else { return nil }
        let audio = (0..<input.streamCount).filter { input.stream($0)?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }
        var first = [Int: Int64](), end = [Int: Int64]()
        let p = input.packet
        while input.read() >= 0 {
            let index = Int(p.pointee.stream_index)
            guard audio.contains(index), p.pointee.pts != sr_nopts_value() else { continue }
            let pts = p.pointee.pts
            first[index] = min(first[index] ?? pts, pts)
            end[index] = max(end[index] ?? pts, pts + max(0, p.pointee.duration))
        }
        return audio.map { index in
            guard let timeBase = input.stream(index)?.pointee.time_base, timeBase.num > 0, timeBase.den > 0,
                  let first = first[index], let end = end[index] else { return 0 }
            // Priming an edit list hides comes out at negative times: it is not played.
            return Double(max(0, end - max(0, first))) * Double(timeBase.num) / Double(timeBase.den)
        }
    }
}
