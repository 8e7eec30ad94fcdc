internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif
internal import SystemPackage

extension UnsafeMutablePointer<AVFormatContext> {
    /// Whether a VP9 stream's pixel format is still unknown after the header was read: the
    /// mov muxer writes VP9's `vpcC` box from it. (Other codecs' sample descriptions come
    /// from their extradata and sizes, which the header has; probing them would decode
    /// frames for nothing.)
    var hasVP9OfUnknownFormat: Bool {
        (0..<Int(pointee.nb_streams)).contains { i in
            guard let par = pointee.streams[i]?.pointee.codecpar else { return false }
            return par.pointee.codec_type == AVMEDIA_TYPE_VIDEO && par.pointee.codec_id == AV_CODEC_ID_VP9 && par.pointee.format < 0
        }
    }
}

extension MediaRepair {
    /// Reads back a file `remux` wrote: it must open, and hold every one of the `packets`
    /// packets of pictures and sound written, each readable (subtitle packets are not
    /// counted: an MP4's muxer adds its own). A rewrite that fails this never replaces what
    /// it was made from.
    static func verify(_ path: String, packets: Int) throws(SwiftRecordError) {
        let input = try Demuxer(path: path, operation: "read back the rewritten file", kind: .invalidData,
                                hint: "the rewrite is not readable; the original is kept")
        var read = 0
        while true {
            let code = input.read()
            if code == sr_error_eof() { break }
            try check(code, "read back the rewritten file", kind: .invalidData, hint: "the rewrite is not readable; the original is kept")
            let stream = input.context.pointee.streams[Int(input.packet.pointee.stream_index)]
            let type = stream?.pointee.codecpar.pointee.codec_type
            if (input.packet.pointee.flags & sr_pkt_flag_corrupt()) == 0, type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO { read += 1 }
        }
        guard read == packets else {
            throw SwiftRecordError(.invalidData, operation: "read back the rewritten file",
                                   message: "\(read) of its \(packets) packets are readable; the original is kept")
        }
    }
}

extension MediaRepair {
    /// Whether `path` is already a complete, ordinary file that `repair` would only copy: an
    /// MP4/MOV with its index (`moov`), not fragmented, its boxes filling the file exactly; or
    /// a Matroska file that states its duration (a cut-off one has none). Either way every
    /// packet must read, every audio and video track hold one, and the packets reach the
    /// duration the file states (a Matroska file cut short keeps the duration its header
    /// was written with; an MP4 killed before its first fragment has an index and no
    /// sample). Anything that cannot be read or told apart is not complete.
    static func isComplete(_ path: String) -> Bool {
        guard let reader = Demuxer(path: path) else { return false }
        let input = reader.context
        let demuxer = reader.formatName
        if demuxer.hasPrefix("mov") {
            guard let boxes = topLevelBoxes(path), boxes.fillFile,
                  boxes.types.contains("moov"), !boxes.types.contains("moof") else { return false }
        } else if demuxer.hasPrefix("matroska") {
            guard avformat_find_stream_info(input, nil) >= 0,
                  input.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE else { return false }
        } else {
            return false
        }
        let nopts = sr_nopts_value()
        let duration = input.pointee.duration
        guard duration != nopts, duration > 0 else { return false }
        var unread = Set((0..<Int32(input.pointee.nb_streams)).filter { i in
            let type = input.pointee.streams[Int(i)]?.pointee.codecpar.pointee.codec_type
            return type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_VIDEO
        })
        var end = Int64.min
        while true {
            let code = reader.read()
            if code == sr_error_eof() { break }
            let p = reader.packet.pointee
            if code < 0 || (p.flags & sr_pkt_flag_corrupt()) != 0 { return false }
            unread.remove(p.stream_index)
            let time = p.pts != nopts ? p.pts : p.dts
            guard time != nopts, let stream = input.pointee.streams[Int(p.stream_index)] else { continue }
            end = max(end, av_rescale_q(time.addingReportingOverflow(max(0, p.duration)).partialValue, stream.pointee.time_base, AVRational(num: 1, den: 1_000_000)))
        }
        // A header's duration counts from 0 (AssetReader's extent); one that is a length,
        // from the start: the packets must reach the nearer of the two.
        let start = input.pointee.start_time != nopts ? input.pointee.start_time : 0
        return unread.isEmpty && end >= min(duration, start + duration) - completenessTolerance
    }

    /// How far before the duration a file states its packets may end and it still be
    /// complete (microseconds): a last packet without a duration, rounding.
    static let completenessTolerance: Int64 = 250_000

    /// The types of an ISO BMFF (MP4/MOV) file's top-level boxes in order, and whether they
    /// end exactly at the end of the file (a cut-off file's last box claims more); nil if
    /// the file cannot be read.
    static func topLevelBoxes(_ path: String) -> (types: [String], fillFile: Bool)? {
        guard let file = try? PathBytes.withCString(path, { try FileDescriptor.open($0, .readOnly, options: .closeOnExec) })
        else { return nil }
        defer { try? file.close() }
        var st = stat()
        guard fstat(file.rawValue, &st) == 0 else { return nil }
        let size = Int64(st.st_size)
        var offset: Int64 = 0, types: [String] = []
        var header = [UInt8](repeating: 0, count: 16)
        while offset + 8 <= size {
            guard let n = try? header.withUnsafeMutableBytes({ try file.read(fromAbsoluteOffset: offset, into: $0) }), n >= 8 else { return nil }
            var length = header[0..<4].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if length == 1 {
                guard offset + 16 <= size else { return (types, false) }
                length = header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            } else if length == 0 {
                length = size - offset
            }
            types.append(String(decoding: header[4..<8], as: UTF8.self))
            guard length >= 8, length <= size - offset else { return (types, false) }
            offset += length
        }
        return (types, offset == size)
    }
}
