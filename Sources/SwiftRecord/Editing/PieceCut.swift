internal import CFFmpeg
import Foundation

/// Which packets of a piece's file a copy keeps, packet by packet in file order (a pure
/// decision on times and flags; `PieceWriter` reads and writes).
///
/// - Pictures: from the key frame at `start` (earlier ones, and the pictures after it that
///   show before it, which need the group before, are left out) to the last picture shown
///   before `end`, with the pictures decoded before it that it may need: a picture shown at
///   or after `end` is held until one shown before `end` follows it in decode order, and
///   dropped if none does. Once a picture decodes at or after `end`, no later one can show
///   before it.
/// - Sound: the packets that play between `start` and the pictures' end (or `end` without
///   pictures). The first piece into an MP4/MOV keeps a packet before `start` as the
///   decoder's pre-roll (it plays before 0, which the edit list hides); otherwise a piece starts with the
///   first packet at or after its start, so nothing overlaps the piece before.
struct PieceCut {
    private let video: Int?
    private let audio: Int?
    private let isFirst: Bool
    /// Per stream index: the start and end in the stream's time base.
    private var startTicks: [Int: Int64] = [:]
    private var endTicks: [Int: Int64] = [:]
    private var frameTicks: [Int: Int64] = [:]
    private var timeBases: [Int: AVRational] = [:]

    private var videoStarted = false
    private var videoDone: Bool
    private var audioDone: Bool
    /// Pictures shown at or after the end, held in case a picture shown before it needs them.
    private var heldVideo: [Packet] = []
    /// Sound past the pictures' end so far, held until the pictures reach it.
    private var heldAudio: [Packet] = []
    /// The end of the last picture (or sound without pictures) kept, in its time base.
    private var endTick: Int64?
    private var reachedTime: MediaTime = .zero

    /// `videoStart`, `videoEnd`: where the copied pictures start and end when not at `start`
    /// and `end` (an exact cut's next key frame, and its tail's clean point); `copiesVideo`
    /// false: none are copied; `pictureEnd`: where the re-encoded pictures end.
    init(source: ClipStreams, start: MediaTime, end: MediaTime?, isFirst: Bool,
         videoStart: MediaTime? = nil, copiesVideo: Bool = true, videoEnd: MediaTime? = nil, pictureEnd: MediaTime? = nil) {
        video = source.video
        audio = source.audio
        self.isFirst = isFirst
        for index in source.streams {
            guard let stream = source.demuxer.stream(index) else { continue }
            let tb = stream.pointee.time_base
            timeBases[index] = tb
            startTicks[index] = PieceWriter.ticks(start, tb)
            if let end { endTicks[index] = PieceWriter.ticks(end, tb) }
            let rate = stream.pointee.avg_frame_rate
            if rate.num > 0 && rate.den > 0 { frameTicks[index] = max(1, av_rescale_q(1, AVRational(num: rate.den, den: rate.num), tb)) }
        }
        videoDone = video == nil
        audioDone = audio == nil
        reachedTime = start
        if let v = video, let tb = timeBases[v] {
            if let pictureEnd { endTick = PieceWriter.ticks(pictureEnd, tb) }
            if let videoStart { startTicks[v] = PieceWriter.ticks(videoStart, tb) }
            // Past a clean point no later picture shows before it: the held ones go.
            if let videoEnd { endTicks[v] = PieceWriter.ticks(videoEnd, tb) }
            if !copiesVideo { videoDone = true }
        }
    }

    /// Every stream has passed the end: nothing more to read.
    var finished: Bool { videoDone && audioDone }

    /// The latest time kept so far, for progress.
    var reached: MediaTime { reachedTime }

    /// Where the kept pictures end (or the sound, without pictures), in the file's times.
    var end: MediaTime {
        guard let endTick, let index = video ?? audio, let tb = timeBases[index] else { return reachedTime }
        return PieceWriter.time(endTick, tb)
    }

    private func duration(_ p: UnsafeMutablePointer<AVPacket>, _ index: Int) -> Int64 {
        p.pointee.duration > 0 ? p.pointee.duration : frameTicks[index] ?? 0
    }

    /// The packets to write now for `packet` (its own reference, or held ones released by it).
    mutating func admit(_ packet: UnsafeMutablePointer<AVPacket>) -> [Packet] {
        let index = Int(packet.pointee.stream_index)
        let pts = packet.pointee.pts
        guard pts != sr_nopts_value(), let start = startTicks[index] else { return [] }
        if index == video { return admitVideo(packet, pts: pts, start: start) }
        if index == audio { return admitAudio(packet, pts: pts, start: start) }
        return []
    }

    private mutating func admitVideo(_ packet: UnsafeMutablePointer<AVPacket>, pts: Int64, start: Int64) -> [Packet] {
        guard let index = video, !videoDone else { return [] }
        if !videoStarted {
            guard (packet.pointee.flags & sr_pkt_flag_key()) != 0, pts >= start else { return [] }
            videoStarted = true
        }
        // A picture shown before the key frame needs the group before it.
        if pts < start { return [] }
        let dts = packet.pointee.dts == sr_nopts_value() ? pts : packet.pointee.dts
        if let end = endTicks[index] {
            if dts >= end {
                videoDone = true
                heldVideo = []
                return releaseAudio()
            }
            if pts >= end {
                if let held = try? Packet(referencing: packet) { heldVideo.append(held) }
                return []
            }
        }
        guard let own = try? Packet(referencing: packet) else { return [] }
        var out = heldVideo + [own]
        heldVideo = []
        for p in out { endTick = max(endTick ?? .min, p.pointer.pointee.pts + duration(p.pointer, index)) }
        if let tb = timeBases[index] { reachedTime = max(reachedTime, PieceWriter.time(pts, tb)) }
        out += releaseAudio()
        return out
    }

    private mutating func admitAudio(_ packet: UnsafeMutablePointer<AVPacket>, pts: Int64, start: Int64) -> [Packet] {
        guard let index = audio, !audioDone else { return [] }
        let length = duration(packet, index)
        // The first piece keeps one packet before its start (into an MP4/MOV): the decoder's
        // pre-roll (AAC's priming, or the overlap a cut leaves), played before 0 and hidden
        // by the edit list.
        if isFirst ? pts + 2 * length <= start : pts < start { return [] }
        if let end = endTicks[index], pts >= end {
            audioDone = true
            return []
        }
        guard let own = try? Packet(referencing: packet) else { return [] }
        guard video != nil else {
            endTick = max(endTick ?? .min, pts + length)
            if let tb = timeBases[index] { reachedTime = max(reachedTime, PieceWriter.time(pts, tb)) }
            return [own]
        }
        heldAudio.append(own)
        return releaseAudio()
    }

    /// The held sound that plays before the pictures' end so far (all that can be known
    /// while pictures are still coming; once they are done, what is past their end goes).
    private mutating func releaseAudio() -> [Packet] {
        guard let a = audio, let v = video, let atb = timeBases[a], let vtb = timeBases[v] else { return [] }
        let pictureEnd = endTick.map { av_rescale_q($0, vtb, atb) }
        var out: [Packet] = []
        while let first = heldAudio.first {
            let pts = first.pointer.pointee.pts
            guard let pictureEnd, pts < pictureEnd else {
                if videoDone {
                    heldAudio = []
                    audioDone = true
                }
                break
            }
            out.append(heldAudio.removeFirst())
        }
        return out
    }

    /// At the end of the file (or of the piece): what is still held and belongs in it.
    mutating func finish() -> [Packet] {
        heldVideo = []
        videoDone = true
        return releaseAudio()
    }
}
