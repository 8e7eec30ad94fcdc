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
