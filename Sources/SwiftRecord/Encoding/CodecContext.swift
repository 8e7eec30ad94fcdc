internal import CFFmpeg

/// The one owner of an `AVCodecContext`, an encoder's (`EncoderContext`) or a decoder's
/// (`MediaFileReader`): allocated in `init`, freed in `deinit`.
///
/// Not `Sendable`: a codec context serves one thread.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    /// A fresh, unopened context for `codec`.
    init(codec: UnsafePointer<AVCodec>) throws(SwiftRecordError) {
        guard let pointer = avcodec_alloc_context3(codec) else {
            throw SwiftRecordError(.ffmpeg, operation: "avcodec_alloc_context3", message: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&c)
    }
}
