internal import CFFmpeg
import Foundation

/// Copies one piece of a clip (see `ClipCopier`): finds its key frame, then writes its
/// packets moved to the piece's place in the output.
struct PieceWriter {
    let source: ClipStreams
    let piece: ClipPiece
    /// Where the piece starts in the output.
    let offset: MediaTime
    /// The output stream of each of `source.streams`.
    let outputs: [Int32]
    let muxer: Muxer
    /// Per output stream, the last decode time written (the output's time base), carried
    /// from piece to piece: a join whose decode times would go back is refused.
    var lastDecodeTimes: [Int64?]
    /// An exact cut's re-encoded pictures: the head written before the copy resumes, the
    /// tail after it stops.
    var edges = CutEdges()
    /// Whether the output hides sound before 0 (an MP4/MOV edit list), so the first piece
    /// may keep a packet of pre-roll; Matroska would move every track later instead.
    var preRoll = true

    /// What was written: the piece's start (its key frame) and end in its file, and packets.
    struct Written {
        var start: MediaTime
        var end: MediaTime
        var packets: Int
    }

    private var context: UnsafeMutablePointer<AVFormatContext> { source.demuxer.context }

    private func timeBase(_ index: Int) -> AVRational { source.demuxer.stream(index)?.pointee.time_base ?? AVRational(num: 1, den: 1) }

    static func ticks(_ t: MediaTime, _ tb: AVRational) -> Int64 {
        av_rescale_q_rnd(t.value, AVRational(num: 1, den: t.timescale), tb, AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }

    static func time(_ ticks: Int64, _ tb: AVRational) -> MediaTime {
        MediaTime(value: ticks * Int64(tb.num), timescale: tb.den)
    }

    /// Reads from the piece's start: the packets up to the first picture decoded after the
    /// start asked for, and the key frame the piece starts at (its presentation time).
    private func readToStart() throws(SwiftRecordError) -> (buffered: [Packet], keyFrame: MediaTime) {
        guard let v = source.video, piece.start > .zero else {
            return ([], piece.start)
        }
        let tb = timeBase(v)
        let from = PieceWriter.ticks(piece.start, tb)
        // Backward: to the key frame at or before `from` (MP4/MOV, Matroska with cues). A
        // seek that fails reads from the beginning.
        if av_seek_frame(context, Int32(v), from, sr_seek_flag_backward()) < 0 {
            _ = avformat_seek_file(context, -1, Int64.min, Int64.min, Int64.min, 0)
        }
        var buffered: [Packet] = []
        var key: Int64?
        var firstKey: Int64?
        while true {
            let step = try codecStep(source.demuxer.read(), "read \(source.path)")
            if step == .endOfStream { break }
            let p = source.demuxer.packet
            buffered.append(try Packet(referencing: p))
            guard Int(p.pointee.stream_index) == v else { continue }
            let pts = p.pointee.pts, dts = p.pointee.dts == sr_nopts_value() ? pts : p.pointee.dts
            if (p.pointee.flags & sr_pkt_flag_key()) != 0, pts != sr_nopts_value() {
                if firstKey == nil { firstKey = pts }
                if pts <= from { key = pts }
            }
            // Later packets all decode after this one, and show at or after their decode time.
            if dts > from { break }
        }
        guard let start = key ?? firstKey else {
            throw SwiftRecordError(.invalidData, operation: "export \(source.path)",
                                   message: "no key frame found from \(String(format: "%.3f", piece.start.seconds)) s on: nothing decodable to copy")
        }
        return (buffered, PieceWriter.time(start, tb))
    }

    /// Writes the piece; `progress` gets the time reached in the piece, from its start.
    mutating func run(isCancelled: () -> Bool, progress: (MediaTime) -> Void) throws(SwiftRecordError) -> Written {
        var (buffered, start) = try readToStart()
        var packets = 0
        var videoStart: MediaTime?, videoEnd: MediaTime?, pictureEnd: MediaTime?
        var copiesVideo = true
        let tb = source.video.map(timeBase) ?? AVRational(num: 1, den: 1)
        if let head = edges.head {
            // An exact cut: the output starts with the picture shown at the cut; the
            // pictures up to the next key frame are the re-encoded ones.
            start = head.span.map { PieceWriter.time($0.start, tb) } ?? head.resume.map { PieceWriter.time($0.pts, tb) } ?? piece.start
            videoStart = head.resume.map { PieceWriter.time($0.pts, tb) }
            copiesVideo = head.resume != nil
            pictureEnd = head.span.map { PieceWriter.time($0.end, tb) }
        }
        if let span = edges.tail?.span {
            // The copy stops at the clean point; the re-encoded pictures run on to the end.
            videoEnd = PieceWriter.time(span.start, tb)
            pictureEnd = PieceWriter.time(span.end, tb)
        }
        cutStart = start
        if let head = edges.head { packets += try write(head) }
        var state = PieceCut(source: source, start: start, end: piece.end, isFirst: offset == .zero && preRoll,
                             videoStart: videoStart, copiesVideo: copiesVideo, videoEnd: videoEnd, pictureEnd: pictureEnd)
        var count = 0
        func take(_ packet: UnsafeMutablePointer<AVPacket>) throws(SwiftRecordError) {
            for out in state.admit(packet) {
                try write(out.pointer)
                packets += 1
            }
        }
        for p in buffered { try take(p.pointer) }
        while !state.finished {
            count += 1
            if isCancelled() {
                throw SwiftRecordError(.cancelled, operation: "export", message: "stopped after \(packets) packets")
            }
            let step = try codecStep(source.demuxer.read(), "read \(source.path)")
            if step == .endOfStream { break }
            try take(source.demuxer.packet)
            if count % 64 == 0 { progress(state.reached - start) }
        }
        if let tail = edges.tail { packets += try write(tail) }
        for out in state.finish() {
            try write(out.pointer)
            packets += 1
        }
        guard packets > 0 else {
            throw SwiftRecordError(.invalidData, operation: "export \(source.path)",
                                   message: "nothing to copy between \(String(format: "%.3f", piece.start.seconds)) s and the end asked for")
        }
        return Written(start: start, end: max(start, state.end), packets: packets)
    }

    /// Writes re-encoded pictures, decoded as early before they show as the copied ones
    /// (`lead`), so decode times run on across the seams; returns how many.
    private mutating func write(_ part: SmartCutPart) throws(SwiftRecordError) -> Int {
        guard let v = source.video else { return 0 }
        for sample in part.samples {
            let packet = try Packet(copying: sample.data)
            packet.pointer.pointee.pts = sample.pts
            packet.pointer.pointee.dts = sample.pts - part.lead
            packet.pointer.pointee.duration = sample.duration
            packet.pointer.pointee.flags = sample.key ? sr_pkt_flag_key() : 0
            packet.pointer.pointee.stream_index = Int32(v)
            try write(packet.pointer)
        }
        return part.samples.count
    }

    /// Writes `packet` (its file's times) at its place in the output.
    private mutating func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(SwiftRecordError) {
        let si = Int(packet.pointee.stream_index)
        guard let slot = source.streams.firstIndex(of: si) else { return }
        let tb = timeBase(si)
        let shift = PieceWriter.ticks(offset, tb) - PieceWriter.ticks(startTime, tb)
        if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += shift }
        if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += shift }
        packet.pointee.pos = -1
        let outTB = muxer.timeBase(ofStream: outputs[slot])
        if packet.pointee.dts != sr_nopts_value() {
            let dts = av_rescale_q(packet.pointee.dts, tb, outTB)
            if let last = lastDecodeTimes[slot], dts <= last {
                throw SwiftRecordError(.unsupported, operation: "join \(source.path)",
                                       message: "its \(slot == 0 && source.video != nil ? "pictures" : "sound") would decode before the end of the piece before "
                                       + "(decode times going back at the join); re-encode instead of copying")
            }
            lastDecodeTimes[slot] = dts
        }
        try muxer.write(packet, stream: outputs[slot], from: tb)
    }

    /// The key frame the piece starts at, once known (set by `run`).
    private var startTime: MediaTime { cutStart ?? piece.start }
    var cutStart: MediaTime? = nil
}
