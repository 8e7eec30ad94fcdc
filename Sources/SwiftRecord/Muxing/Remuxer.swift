internal import CFFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `MediaRepair.repair` did.
public struct RepairReport: Sendable, CustomStringConvertible {
    /// Packets copied into the repaired file.
    public let packetsCopied: Int
    /// Packets dropped: cut off by the end of the file or otherwise unreadable.
    public let packetsDropped: Int
    /// Whether the input ended before its last packet was complete (a killed recording).
    public let inputWasTruncated: Bool
    /// Media duration of the repaired file in seconds.
    public let durationSeconds: Double
    /// The input was already complete and was repaired in place: nothing was written, the
    /// file is as it was.
    public var nothingToRepair = false
    /// Of `packetsCopied`, those of pictures and sound: what reading the file back must find
    /// (an MP4's muxer adds empty `mov_text` samples between subtitles).
    var timedPacketsCopied = 0

    public var description: String {
        if nothingToRepair { return "nothing to repair: a complete file, left as it was" }
        return String(format: "%d packets copied, %d dropped, %.3f s%@", packetsCopied, packetsDropped, durationSeconds,
                      inputWasTruncated ? " (the input was cut off)" : "")
    }
}

/// Rewrites recordings without re-encoding: turns a fragmented or cut-off MP4/MOV (what
/// a killed crash-safe recording leaves) or a cut-off MKV into an ordinary, seekable file
/// with a complete index, optionally with the index at the front. Subtitle streams the
/// output's container takes, and Matroska's attachments, are kept; data streams are not.
public enum MediaRepair {
    /// Copies every readable packet of `input` into a new file at `output` (its container
    /// from the extension, or `fileType`). Stops cleanly at a cut-off end. `output` may be
    /// `input` (repair in place: a complete, ordinary file, whose packets all read and reach
    /// the duration it states, is then left as it is, byte for byte, and the report says
    /// `nothingToRepair`); any other existing file there is replaced only with
    /// `overwritesExistingFile`. Either way the result is written beside it and takes its
    /// place only when complete, and a symbolic link is followed to the file it names.
    @discardableResult
    public static func repair(input: URL, output: URL, fileType: FileType? = nil,
                              optimizeForNetworkUse: Bool = true,
                              overwritesExistingFile: Bool = false) throws(SwiftRecordError) -> RepairReport {
        try repair(input: input, output: output, fileType: fileType, optimizeForNetworkUse: optimizeForNetworkUse,
                   overwritesExistingFile: overwritesExistingFile, priming: [:])
    }

    static func repair(input: URL, output: URL, fileType: FileType?, optimizeForNetworkUse: Bool,
                       overwritesExistingFile: Bool = false, priming: [Int: Int64]) throws(SwiftRecordError) -> RepairReport {
        guard let type = fileType ?? FileType(pathExtension: output.pathExtension) else {
            throw SwiftRecordError(.unsupported, operation: "repair", message: "cannot tell the container from '\(output.lastPathComponent)'; expected .mp4, .mov, .mkv or .webm")
        }
        guard let source = FileIdentity(path: input.path) else {
            throw SwiftRecordError(.io, operation: "repair", message: "'\(input.path)' does not exist")
        }
        let inPlace = FileIdentity(path: output.path) == source
        if inPlace && priming.isEmpty && isComplete(input.path) {
            return RepairReport(packetsCopied: 0, packetsDropped: 0, inputWasTruncated: false, durationSeconds: 0, nothingToRepair: true)
        }
        let file = try OutputFile(output.path, what: "repair", overwrite: inPlace || overwritesExistingFile,
                                  howToReplace: "pass overwritesExistingFile: true")
        try file.createEmpty()
        do throws(SwiftRecordError) {
            let report = try remux(input: input.path, output: file.ioPath, fileType: type, faststart: optimizeForNetworkUse,
                                   priming: priming, displayOutput: file.writingPath)
            try verify(file.ioPath, packets: report.timedPacketsCopied)
            try file.commit()
            return report
        } catch {
            file.discard()
            throw error
        }
    }

    /// `priming`: for an input stream index, encoder priming (in that stream's time base)
    /// the input plays but should not (AAC's first 1024 samples, which a fragmented MP4
    /// cannot mark): those packets move before 0 and an edit list hides them.
    static func remux(input: String, output: String, fileType: FileType, faststart: Bool,
                      priming: [Int: Int64] = [:], displayOutput: String? = nil) throws(SwiftRecordError) -> RepairReport {
        // Why a file will not open depends on what it is: an MP4/MOV cut off before its index
        // (written only at the end with --no-fragments), or a Matroska file cut off before
        // its first frame.
        let matroska = input.hasSuffix(".mkv") || input.hasSuffix(".webm")
        let reader = try Demuxer(path: input, operation: "repair \(input)", kind: .invalidData,
                                 hint: matroska ? "cannot open it; it ends before its first complete frame, so there is nothing to keep"
                                                : "cannot open it; a recording made with --no-fragments that was cut off has no index and cannot be repaired")
        let inCtx = reader.context
        // MP4/MOV headers carry nearly every codec parameter; probing (which decodes frames)
        // is needed for other containers, and for a VP9 track: the mov demuxer does not take
        // its pixel format from the `vpcC` box, and the mov muxer cannot write that box
        // without it (it would write an empty one, which no reader opens).
        let demuxer = reader.formatName
        if !demuxer.hasPrefix("mov") || inCtx.hasVP9OfUnknownFormat {
            try check(reader.findStreamInfo(), "repair \(input)", kind: .invalidData, hint: "no readable streams")
        }
        // Only a fragmented MP4/MOV needs its times moved and its last packets' durations
        // taken from the tracks (below); a file with an index, or Matroska, says them right.
        let fragmented = demuxer.hasPrefix("mov") && (topLevelBoxes(input)?.types.contains("moof") ?? true)
        let muxer = try Muxer(url: output, fileType: fileType, displayURL: displayOutput)
        var map: [Int32] = Array(repeating: -1, count: Int(inCtx.pointee.nb_streams))
        for i in 0..<Int(inCtx.pointee.nb_streams) {
            guard let ist = inCtx.pointee.streams[i] else { continue }
            let type = ist.pointee.codecpar.pointee.codec_type
            // Subtitles where the output's muxer takes their codec, attachments into Matroska.
            let carried = type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO
                || (type == AVMEDIA_TYPE_SUBTITLE && avformat_query_codec(muxer.context.pointee.oformat, ist.pointee.codecpar.pointee.codec_id, 0) == 1)
                || (type == AVMEDIA_TYPE_ATTACHMENT && fileType == .mkv)
            guard carried else { continue }
            map[i] = try muxer.addStream(copying: ist)
            // Opus read from a file with an index starts before 0 by its pre-skip; Matroska
            // keeps that as CodecDelay, from a stream written from 0 (as a recording writes it),
            // or libavformat would move every other track later by it, on every pass.
            let par = ist.pointee.codecpar.pointee
            if !fragmented, par.codec_id == AV_CODEC_ID_OPUS, par.initial_padding > 0, par.sample_rate > 0 {
                muxer.setPriming(av_rescale_q(Int64(par.initial_padding), AVRational(num: 1, den: par.sample_rate), ist.pointee.time_base),
                                 codec: .opus, timeBase: Rational(ist.pointee.time_base), stream: map[i])
            }
        }
        let kept = map.indices.filter { map[$0] >= 0 }.compactMap { inCtx.pointee.streams[$0]?.pointee.codecpar.pointee.codec_type }
        guard kept.contains(where: { $0 == AVMEDIA_TYPE_VIDEO || $0 == AVMEDIA_TYPE_AUDIO }) else {
            throw SwiftRecordError(.invalidData, operation: "repair \(input)", message: "no audio or video stream to keep")
        }
        var metadata: [String: String] = [:]
        var tag: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let t = av_dict_get(inCtx.pointee.metadata, "", tag, sr_dict_ignore_suffix()) {
            let key = String(cString: t.pointee.key)
            if key != "major_brand" && key != "minor_version" && key != "compatible_brands" && key != "encoder" {
                metadata[key] = String(cString: t.pointee.value)
            }
            tag = t
        }
        var options: [String: String] = [:]
        if faststart && (fileType == .mp4 || fileType == .mov) { options["movflags"] = "+faststart" }
        if !priming.isEmpty && (fileType == .mp4 || fileType == .mov) {
            options["use_editlist"] = "1"
            options["avoid_negative_ts"] = "disabled"
        }
        try muxer.writeHeader(metadata: metadata, options: options)

        let packet = reader.packet
        var copied = 0, dropped = 0, truncated = false, timed = 0
        var lastDTS = [Int64](repeating: Int64.min, count: map.count)
        var end: Double = 0
        // A fragmented MP4 starts each track's timeline at its first decode time rather than
        // at 0 (a video track with B-frames then starts at its reorder delay); every track
        // of a recording starts at 0, so each is moved back by its first packet's time. A
        // track whose first decode time is later (a converted one that starts after the
        // others, `frag_discont`) was not moved, and keeps its place.
        var offsets = [Int64?](repeating: nil, count: map.count)
        // Each stream's last packet is held until the input ends: a fragmented MP4's demuxer
        // gives AAC packets no duration, and the muxer would end the track at the last
        // packet's start (losing the end of the sound), while the track's own duration says
        // where it ends.
        let held = HeldPackets(count: map.count)
        defer { withExtendedLifetime(held) {} }
        var decodeTimes = DecodeTimeFiller(streams: map.count)
        while true {
            let step = try? codecStep(reader.read(), "av_read_frame")
            if step == .endOfStream { break }
            if step != .ok { truncated = true; break }
            defer { av_packet_unref(packet) }
            let si = Int(packet.pointee.stream_index)
            guard si < map.count, map[si] >= 0, let ist = inCtx.pointee.streams[si] else { continue }
            // An empty `mov_text` sample only ends the one before; the MP4 muxer writes its own.
            if ist.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_MOV_TEXT, packet.pointee.size <= 2 { continue }
            if (packet.pointee.flags & sr_pkt_flag_corrupt()) != 0 {
                dropped += 1
                truncated = true
                continue
            }
            if packet.pointee.dts != sr_nopts_value() {
                if packet.pointee.dts <= lastDTS[si] { dropped += 1; continue }
                lastDTS[si] = packet.pointee.dts
            }
            // After the check above: a decode time filled in never makes a packet count as repeated.
            decodeTimes.fill(packet, stream: si, delay: ist.pointee.codecpar.pointee.video_delay)
            let tb = ist.pointee.time_base
            let decodeTime = packet.pointee.dts
            if offsets[si] == nil, packet.pointee.pts != sr_nopts_value(), fragmented {
                offsets[si] = packet.pointee.dts == sr_nopts_value() || packet.pointee.dts <= 0 ? packet.pointee.pts : 0
            }
            if let shift = offsets[si], shift != 0 {
                if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts -= shift }
                if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts -= shift }
            }
            if let p = priming[si], p > 0 {
                if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts -= p }
                if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts -= p }
            }
            if packet.pointee.pts != sr_nopts_value() {
                end = max(end, Double(packet.pointee.pts + packet.pointee.duration) * Double(tb.num) / Double(tb.den))
            }
            packet.pointee.pos = -1
            if let previous = held.take(stream: si) {
                try muxer.write(previous, stream: map[si], from: tb)
            }
            // A subtitle's own duration says how long it is shown, whatever its track's end.
            let isTimed = ist.pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_SUBTITLE
            held.keep(packet, stream: si, decodeTime: decodeTime, trackEnd: fragmented && isTimed ? ist.pointee.duration : sr_nopts_value())
            copied += 1
            if isTimed { timed += 1 }
        }
        for si in 0..<map.count {
            guard let last = held.take(stream: si, lengthening: !truncated), let ist = inCtx.pointee.streams[si] else { continue }
            let tb = ist.pointee.time_base
            if last.pointee.pts != sr_nopts_value() {
                end = max(end, Double(last.pointee.pts + last.pointee.duration) * Double(tb.num) / Double(tb.den))
            }
            try muxer.write(last, stream: map[si], from: tb)
        }
        try muxer.finish()
        if copied == 0 {
            throw SwiftRecordError(.invalidData, operation: "repair \(input)", message: "no complete frame could be read")
        }
        var report = RepairReport(packetsCopied: copied, packetsDropped: dropped, inputWasTruncated: truncated,
                                  durationSeconds: end)
        report.timedPacketsCopied = timed
        return report
    }
}

/// One packet held back per stream (see `Remuxer.remux`); holds a `Packet` per stream.
private final class HeldPackets {
    private var packets: [Packet?]
    /// Per stream: the held packet's duration as the track's end gives it.
    private var endDurations: [Int64?]
    /// Per stream: the step between the last two decode times, a bound for an end
    /// duration where the packet has none.
    private var steps: [Int64?]
    private var decodeTimes: [Int64?]

    init(count: Int) {
        packets = Array(repeating: nil, count: count)
        endDurations = Array(repeating: nil, count: count)
        steps = Array(repeating: nil, count: count)
        decodeTimes = Array(repeating: nil, count: count)
    }

    /// Holds `packet`'s data (leaving it blank). `decodeTime`: its decode time as read;
    /// `trackEnd`: the input stream's duration, both in the stream's time base.
    func keep(_ packet: UnsafeMutablePointer<AVPacket>, stream: Int, decodeTime: Int64, trackEnd: Int64) {
        if packets[stream] == nil { packets[stream] = try? Packet() }
        guard let slot = packets[stream]?.pointer else { return }
        av_packet_unref(slot)
        av_packet_move_ref(slot, packet)
        endDurations[stream] = nil
        guard decodeTime != sr_nopts_value() else { return }
        if let previous = decodeTimes[stream], decodeTime > previous { steps[stream] = decodeTime - previous }
        decodeTimes[stream] = decodeTime
        if trackEnd != sr_nopts_value(), trackEnd > decodeTime {
            endDurations[stream] = trackEnd - decodeTime
        }
    }

    /// The stream's held packet, if any, for the muxer to take; valid until the next
    /// `keep`. When it is the last, its duration is where the track ends: a duration the
    /// packet has is only shortened, a missing one (a fragmented MP4's AAC) is bounded
    /// by the step before it, as a cut-off input may declare more than it holds. An input
    /// read to its end (`lengthening`) is believed: its last frame may also last longer
    /// than the demuxer says (a fragmented MP4's last video frame, which lasts until the
    /// end of a recording at a content-driven frame rate, is given one frame's step).
    func take(stream: Int, lengthening: Bool = false) -> UnsafeMutablePointer<AVPacket>? {
        guard let slot = packets[stream]?.pointer, slot.pointee.data != nil || slot.pointee.size > 0 else { return nil }
        if let d = endDurations[stream] {
            let known = slot.pointee.duration
            if lengthening || (known > 0 ? d < known : d <= (steps[stream] ?? d)) { slot.pointee.duration = d }
        }
        endDurations[stream] = nil
        return slot
    }
}

extension Muxer {
    /// Adds a stream that carries `source`'s packets unchanged (codec parameters, time
    /// base, display matrix and tags copied).
    func addStream(copying source: UnsafeMutablePointer<AVStream>) throws(SwiftRecordError) -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        try check(avcodec_parameters_copy(stream.pointee.codecpar, source.pointee.codecpar), "avcodec_parameters_copy")
        stream.pointee.codecpar.pointee.codec_tag = 0
        Muxer.fillFrameSize(of: stream.pointee.codecpar)
        stream.pointee.time_base = source.pointee.time_base
        stream.pointee.avg_frame_rate = source.pointee.avg_frame_rate
        stream.pointee.r_frame_rate = source.pointee.r_frame_rate
        stream.pointee.sample_aspect_ratio = source.pointee.sample_aspect_ratio
        av_dict_copy(&stream.pointee.metadata, source.pointee.metadata, 0)
        fitTrackName(of: stream)
        for i in 0..<Int(source.pointee.nb_side_data) {
            let sd = source.pointee.side_data[i]
            guard let dst = av_stream_new_side_data(stream, sd.type, sd.size), let src = sd.data else { continue }
            dst.update(from: src, count: sd.size)
        }
        return stream.pointee.index
    }
}
