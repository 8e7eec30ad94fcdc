internal import CFFmpeg

extension AssetReader {
    /// A stream of the file that is neither audio nor video (subtitles, attachments such as
    /// fonts, data): not one of ``AssetReader/tracks``, so nothing made from a reader carries it.
    public struct OtherStream: Sendable, CustomStringConvertible {
        /// libavformat's stream index, as ``AssetReaderTrack/trackID`` counts.
        public let index: Int
        /// "subtitle", "attachment", "data" or "unknown".
        public let kind: String
        /// FFmpeg's name of the codec ("subrip", "ass", "ttf", …).
        public let codecName: String
        /// Its file name (an attachment) or title, when the file gives one.
        public let name: String?

        public var description: String {
            "stream \(index): \(kind) \(codecName)" + (name.map { " (\($0))" } ?? "")
        }

        /// The streams of `context` that are neither audio nor video.
        static func list(in context: UnsafeMutablePointer<AVFormatContext>) -> [OtherStream] {
            (0..<Int(context.pointee.nb_streams)).compactMap { i -> OtherStream? in
                guard let stream = context.pointee.streams[i], let par = stream.pointee.codecpar else { return nil }
                let type = par.pointee.codec_type
                guard type != AVMEDIA_TYPE_VIDEO && type != AVMEDIA_TYPE_AUDIO else { return nil }
                let kind = av_get_media_type_string(type).map { String(cString: $0) } ?? "unknown"
                func tag(_ key: String) -> String? {
                    av_dict_get(stream.pointee.metadata, key, nil, 0).map { String(cString: $0.pointee.value) }
                }
                return OtherStream(index: i, kind: kind, codecName: String(cString: avcodec_get_name(par.pointee.codec_id)),
                                   name: tag("filename") ?? tag("title") ?? tag("language"))
            }
        }
    }
}

extension AssetReaderTrack {
    /// A subtitle stream of the file as a track (its compressed samples read as they are).
    init(subtitle stream: UnsafeMutablePointer<AVStream>, index: Int, format: FormatDescription) {
        let d = stream.pointee.duration
        self.init(trackID: index, mediaType: .subtitle, formatDescription: format,
                  duration: d != sr_nopts_value() && d > 0 ? format.time(ofTicks: d) : nil, nominalFrameRate: nil,
                  languageCode: AssetReaderTrack.tag("language", of: stream), title: AssetReaderTrack.tag("title", of: stream))
    }

    /// The stream's tag `key`, nil when it has none (or "und", an undetermined language).
    static func tag(_ key: String, of stream: UnsafeMutablePointer<AVStream>) -> String? {
        guard let entry = av_dict_get(stream.pointee.metadata, key, nil, 0) else { return nil }
        let value = String(cString: entry.pointee.value)
        return value.isEmpty || (key == "language" && value == "und") ? nil : value
    }
}

extension AssetAttachment {
    /// The attachment streams of `context` that have a name and bytes; the MIME type is
    /// the stream's own, else the one FFmpeg knows for the codec.
    static func list(in context: UnsafeMutablePointer<AVFormatContext>) -> [AssetAttachment] {
        (0..<Int(context.pointee.nb_streams)).compactMap { i -> AssetAttachment? in
            guard let stream = context.pointee.streams[i], let par = stream.pointee.codecpar,
                  par.pointee.codec_type == AVMEDIA_TYPE_ATTACHMENT,
                  let name = AssetReaderTrack.tag("filename", of: stream),
                  let bytes = par.pointee.extradata, par.pointee.extradata_size > 0 else { return nil }
            let mime = AssetReaderTrack.tag("mimetype", of: stream)
                ?? avcodec_descriptor_get(par.pointee.codec_id)?.pointee.mime_types?.pointee.map { String(cString: $0) }
                ?? "application/octet-stream"
            return AssetAttachment(fileName: name, mimeType: mime,
                                   data: Array(UnsafeBufferPointer(start: bytes, count: Int(par.pointee.extradata_size))))
        }
    }
}
