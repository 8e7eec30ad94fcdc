internal import CFFmpeg

extension Muxer {
    /// Adds a stream carrying `attachment` (a Matroska attachment: its bytes as the
    /// stream's extradata, its name and MIME type as the `filename` and `mimetype` tags the
    /// muxer writes). Call before `writeHeader`.
    func addAttachment(_ attachment: AssetAttachment) throws(SwiftRecordError) {
        guard let stream = avformat_new_stream(context, nil) else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "out of memory")
        }
        guard let par = stream.pointee.codecpar else {
            throw SwiftRecordError(.ffmpeg, operation: "avformat_new_stream", message: "no codec parameters")
        }
        par.pointee.codec_type = AVMEDIA_TYPE_ATTACHMENT
        par.pointee.codec_id = Muxer.codecID(ofMIMEType: attachment.mimeType)
        let padding = Int(sr_input_buffer_padding_size())
        guard let bytes = av_mallocz(attachment.data.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_mallocz", message: "out of memory")
        }
        bytes.update(from: attachment.data, count: attachment.data.count)
        par.pointee.extradata = bytes
        par.pointee.extradata_size = Int32(attachment.data.count)
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        try check(av_dict_set(&stream.pointee.metadata, "filename", attachment.fileName, 0), "av_dict_set(filename)")
        try check(av_dict_set(&stream.pointee.metadata, "mimetype", attachment.mimeType, 0), "av_dict_set(mimetype)")
    }

    /// The codec FFmpeg gives files of `mime` (`font/ttf` → ttf), none when it knows none.
    static func codecID(ofMIMEType mime: String) -> AVCodecID {
        var descriptor = avcodec_descriptor_next(nil)
        while let d = descriptor {
            if var types = d.pointee.mime_types {
                while let t = types.pointee {
                    if String(cString: t) == mime { return d.pointee.id }
                    types += 1
                }
            }
            descriptor = avcodec_descriptor_next(d)
        }
        return AV_CODEC_ID_NONE
    }
}
