internal import CFFmpeg

extension MediaFileReader {
    /// How many video frames a reader of the file at `path` finds: the complete packets of
    /// its first video stream, read without decoding (a cut-off last packet does not
    /// count). Nil when the file cannot be opened as media at all (an MP4 without its
    /// index, a file with no video): nothing usable is there.
    public static func videoFrameCount(path: String) -> Int? {
        _ = FFmpegLog.configure
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard PathBytes.withCString(path, { avformat_open_input(&ctx, $0, nil, nil) }) >= 0, let format = ctx else { return nil }
        defer { avformat_close_input(&ctx) }
        var stream: Int32 = -1
        for i in 0..<Int(format.pointee.nb_streams) where format.pointee.streams[i]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
            stream = Int32(i)
            break
        }
        guard stream >= 0 else { return nil }
        var packet = av_packet_alloc()
        guard let p = packet else { return nil }
        defer { av_packet_free(&packet) }
        var count = 0
        while av_read_frame(format, p) >= 0 {
            if p.pointee.stream_index == stream && (p.pointee.flags & sr_pkt_flag_corrupt()) == 0 && p.pointee.size > 0 {
                count += 1
            }
            av_packet_unref(p)
        }
        return count
    }
}
