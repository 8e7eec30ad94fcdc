internal import CFFmpeg

extension FormatDescription {
    /// Whether a `fileType` file can carry this codec as it is: libavformat's muxer is asked
    /// by writing a header for it in memory (see `canBeCarried(_:in:)`).
    public func canBeCarried(in fileType: FileType) -> Bool {
        FormatDescription.canBeCarried([self], in: fileType)
    }

    /// Whether one `fileType` file can carry all of `formats` together, as they are.
    ///
    /// `avformat_query_codec` alone says yes to pairs the muxer then refuses when it writes
    /// its header (VP9 or AV1 in MOV, FLAC in MOV, and in MP4 without `-strict
    /// experimental`): the muxer itself is asked, by writing a header for these streams
    /// into a buffer in memory, its messages kept out of the log.
    public static func canBeCarried(_ formats: [FormatDescription], in fileType: FileType) -> Bool {
        guard !formats.isEmpty, let format = av_guess_format(fileType.muxerName, nil, nil),
              formats.allSatisfy({ avformat_query_codec(format, $0.parameters.pointee.codec_id, 0) == 1 }) else { return false }
        _ = FFmpegLog.configure
        var made: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&made, format, nil, nil) >= 0, let context = made else { return false }
        defer { avformat_free_context(context) }
        for f in formats {
            guard let stream = avformat_new_stream(context, nil),
                  avcodec_parameters_copy(stream.pointee.codecpar, f.parameters) >= 0 else { return false }
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = f.timeBase
        }
        guard avio_open_dyn_buf(&context.pointee.pb) >= 0, let pb = context.pointee.pb else { return false }
        // A file is seekable (MP4/MOV refuse to write an index to a stream that is not);
        // the buffer can seek too.
        pb.pointee.seekable = AVIO_SEEKABLE_NORMAL
        let written = FFmpegLog.quieted(context) { avformat_write_header(context, nil) }
        var bytes: UnsafeMutablePointer<UInt8>?
        _ = avio_close_dyn_buf(pb, &bytes)
        av_free(bytes)
        context.pointee.pb = nil
        return written >= 0
    }
}
