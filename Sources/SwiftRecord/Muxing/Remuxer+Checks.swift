internal import CFFmpeg

extension UnsafeMutablePointer<AVFormatContext> {
    /// Whether a video stream's pixel format is still unknown after the header was read.
    var hasVideoOfUnknownFormat: Bool {
        (0..<Int(pointee.nb_streams)).contains { i in
            guard let par = pointee.streams[i]?.pointee.codecpar else { return false }
            return par.pointee.codec_type == AVMEDIA_TYPE_VIDEO && par.pointee.format < 0
        }
    }
}

extension MediaRepair {
    /// Reads back a file `remux` wrote: it must open, and hold every one of the `packets`
    /// packets written, each readable. A rewrite that fails this never replaces what it
    /// was made from.
    static func verify(_ path: String, packets: Int) throws(SwiftRecordError) {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_open_input(&ctx, path, nil, nil), "read back the rewritten file", kind: .invalidData,
                  hint: "the rewrite is not readable; the original is kept")
        defer { avformat_close_input(&ctx) }
        guard let ctx, let packet = av_packet_alloc() else {
            throw SwiftRecordError(.ffmpeg, operation: "read back the rewritten file", message: "out of memory")
        }
        var pkt: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pkt) }
        var read = 0
        while true {
            let code = av_read_frame(ctx, packet)
            if code == sr_error_eof() { break }
            try check(code, "read back the rewritten file", kind: .invalidData, hint: "the rewrite is not readable; the original is kept")
            if (packet.pointee.flags & sr_pkt_flag_corrupt()) == 0 { read += 1 }
            av_packet_unref(packet)
        }
        guard read == packets else {
            throw SwiftRecordError(.invalidData, operation: "read back the rewritten file",
                                   message: "\(read) of its \(packets) packets are readable; the original is kept")
        }
    }
}
