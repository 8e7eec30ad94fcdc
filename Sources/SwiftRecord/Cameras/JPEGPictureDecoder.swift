internal import CFFmpeg

/// Decodes one JPEG picture at a time (a camera's MJPG stream: every picture a whole JPEG)
/// through libavcodec's `mjpeg` decoder and converts it with libswscale into a pixel
/// buffer of any size and format. The one holder of its decoder, packet, frame and scaler;
/// used by one thread at a time (the camera's reader), so not `Sendable`.
///
/// JPEG's full-range YUV (`yuvj4xxp`) is read as full range and written in the buffer's
/// range (limited for YUV, as encoders expect), without libswscale's deprecated-format path.
package final class JPEGPictureDecoder {
    private let decoder: CodecContext
    /// The picture decoded, and the JPEG it is decoded from: one each, reused.
    private let frame: Frame
    private let packet: Packet
    private var scaler: (key: Key, context: ScaleContext)?
    private struct Key: Equatable { var width: Int32, height: Int32, format: Int32, destination: VideoSize, pixelFormat: PixelFormat }

    package init() throws(SwiftRecordError) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else {
            throw SwiftRecordError(.unsupported, operation: "camera", message: "this FFmpeg has no MJPEG decoder, needed for an MJPG camera")
        }
        decoder = try CodecContext(codec: codec)
        decoder.pointer.pointee.thread_count = 1
        try check(avcodec_open2(decoder.pointer, codec, nil), "open the MJPEG decoder")
        frame = try Frame()
        packet = try Packet()
    }

    /// Decodes the JPEG in `bytes` into `picture` (scaled to its size and converted to its
    /// format). False when `bytes` hold no whole picture (cut short, or not decodable: the
    /// caller keeps its last picture); throws only when the machinery itself fails.
    package func decode(_ bytes: UnsafeRawBufferPointer, into picture: PixelBuffer) throws(SwiftRecordError) -> Bool {
        guard JPEGPictureDecoder.isWhole(bytes) else { return false }
        try packet.set(copying: bytes)
        defer { packet.unref() }
        let frame = self.frame.pointer
        // A damaged picture is the camera's fault, not the recording's: it is skipped.
        guard avcodec_send_packet(decoder.pointer, packet.pointer) >= 0 else { return false }
        guard avcodec_receive_frame(decoder.pointer, frame) >= 0 else { return false }
        defer { self.frame.unref() }
        let w = frame.pointee.width, h = frame.pointee.height
        guard w > 0, h > 0 else { return false }
        let key = Key(width: w, height: h, format: frame.pointee.format,
                      destination: VideoSize(width: picture.width, height: picture.height), pixelFormat: picture.pixelFormat)
        if scaler?.key != key {
            scaler = nil
            let context = try ScaleContext(from: VideoSize(width: Int(w), height: Int(h)), JPEGPictureDecoder.plainFormat(AVPixelFormat(rawValue: key.format)),
                                           to: key.destination, picture.pixelFormat.av, flags: ScaleContext.bilinear,
                                           describe: "the camera's \(w)x\(h) JPEG pictures to \(key.destination) \(picture.pixelFormat)")
            scaler = (key, context)
        }
        // A yuvj picture is full range whatever it is tagged with: read as such.
        if JPEGPictureDecoder.plainFormat(AVPixelFormat(rawValue: key.format)).rawValue != key.format { frame.pointee.color_range = AVCOL_RANGE_JPEG }
        scaler?.context.useColors(of: frame)
        guard let context = scaler?.context else { return false }
        try picture.withWritableFrame { (destination) throws(SwiftRecordError) in
            try context.scale(frame, height: Int(h), into: destination, operation: "camera: convert a JPEG picture")
        }
        return true
    }

    /// Starts with a JPEG's start-of-image marker and ends (trailing zero padding aside) with
    /// its end-of-image marker: a picture cut short (a USB transfer lost) is caught here,
    /// where libavcodec would conceal the missing part and return a half-grey picture.
    static func isWhole(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var end = bytes.count
        while end > 2, bytes[end - 1] == 0, bytes.count - end < 64 { end -= 1 }
        return bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
    }

    /// The `yuvj` formats' plain equivalents (libswscale warns of the yuvj ones as deprecated).
    private static func plainFormat(_ format: AVPixelFormat) -> AVPixelFormat {
        switch format {
        case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P
        case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P
        default: return format
        }
    }
}
