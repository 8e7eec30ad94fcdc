internal import CFFmpeg

/// The one owner of an input `AVFormatContext` (a media file opened for reading: repair's
/// input, the read-backs of a rewrite, `MediaFileReader`, the frame and audio counts) and
/// of the packet it reads into; both are freed with it.
///
/// Not `Sendable`: one reader at a time, on the thread that made it.
final class Demuxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    /// Where `read()` puts each packet; valid until the next `read()`.
    let packet: UnsafeMutablePointer<AVPacket>

    /// Opens `path` (bytes, `PathBytes`) and reads its header; a failure is `operation`'s,
    /// of `kind`, with `hint` after FFmpeg's reason.
    init(path: String, operation: @autoclosure () -> String, kind: SwiftRecordError.Kind = .io,
         hint: @autoclosure () -> String? = nil) throws(SwiftRecordError) {
        _ = FFmpegLog.configure
        var opened: UnsafeMutablePointer<AVFormatContext>?
        try check(PathBytes.withCString(path) { avformat_open_input(&opened, $0, nil, nil) }, operation(), kind: kind, hint: hint())
        guard let opened else {
            throw SwiftRecordError(kind, operation: operation(), message: "cannot open it")
        }
        guard let packet = av_packet_alloc() else {
            var c: UnsafeMutablePointer<AVFormatContext>? = opened
            avformat_close_input(&c)
            throw SwiftRecordError(.ffmpeg, operation: "av_packet_alloc", message: "out of memory")
        }
        context = opened
        self.packet = packet
    }

    /// Nil when `path` cannot be opened as media.
    convenience init?(path: String) {
        try? self.init(path: path, operation: "open \(path)")
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
    }

    /// The demuxer's name ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", …).
    var formatName: String { String(cString: context.pointee.iformat.pointee.name) }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
        index >= 0 && index < streamCount ? context.pointee.streams[index] : nil
    }

    /// The index of the first stream of `type`, if any.
    func firstStream(_ type: AVMediaType) -> Int? {
        (0..<streamCount).first { stream($0)?.pointee.codecpar.pointee.codec_type == type }
    }

    /// Probes the streams (decoding a few packets where the header does not say enough).
    func findStreamInfo() -> Int32 { avformat_find_stream_info(context, nil) }

    /// Reads the next packet into `packet`, the previous one released first: 0, `AVERROR_EOF`
    /// at the end, or another FFmpeg error.
    func read() -> Int32 {
        av_packet_unref(packet)
        return av_read_frame(context, packet)
    }
}
