internal import CFFmpeg
import Foundation

/// A still-image file format an `AssetImageGenerator` encodes to, through libavcodec's
/// encoders.
public enum ImageFileFormat: String, Sendable, CaseIterable {
    /// PNG (libavcodec's `png` encoder): lossless, 8-bit RGB.
    case png
    /// JPEG (libavcodec's `mjpeg` encoder): 4:2:0, BT.601 full range (JFIF).
    case jpeg

    /// The format a file name's extension names (.png; .jpg, .jpeg); nil for others.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        default: return nil
        }
    }
}

/// Encodes one picture as a PNG or JPEG file's bytes: the picture converted (libswscale)
/// into a frame of the encoder's format, sent, and the one packet received. The one holder
/// of its codec context and its frame; not `Sendable` (one picture at a time, on the
/// thread that made it).
final class ImageEncoder {
    private let context: CodecContext
    private let picture: Frame
    private let format: ImageFileFormat
    private let size: VideoSize
    private let pixelFormat: AVPixelFormat

    /// JPEG quality as libavcodec's quantiser scale (`ffmpeg -q:v`): 2 is the best, 31 the worst.
    static let jpegQuality: Int32 = 3

    init(format: ImageFileFormat, size: VideoSize) throws(SwiftRecordError) {
        _ = FFmpegLog.configure
        let id = format == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG
        guard let codec = avcodec_find_encoder(id) else {
            throw SwiftRecordError(.unsupported, operation: "encode a \(format.rawValue) image",
                                   message: "this FFmpeg has no \(format == .png ? "png" : "mjpeg") encoder")
        }
        context = try CodecContext(codec: codec)
        self.format = format
        self.size = size
        // JPEG: 4:2:0 tagged full range (JFIF's), not the deprecated yuvj420p, which makes
        // libswscale warn.
        pixelFormat = format == .png ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_YUV420P
        let c = context.pointer
        c.pointee.width = Int32(size.width)
        c.pointee.height = Int32(size.height)
        c.pointee.pix_fmt = pixelFormat
        c.pointee.time_base = AVRational(num: 1, den: 25)
        c.pointee.thread_count = 1
        if format == .jpeg {
            c.pointee.color_range = AVCOL_RANGE_JPEG
            // A fixed quantiser scale, as `ffmpeg -q:v` sets it.
            try check(av_opt_set(c, "flags", "+qscale", 0), "set the mjpeg encoder's qscale flag")
            c.pointee.global_quality = ImageEncoder.jpegQuality * Int32(FF_QP2LAMBDA)
        }
        try check(avcodec_open2(c, codec, nil), "open the \(format.rawValue) encoder for \(size)")
        picture = try Frame()
        let frame = picture.pointer
        frame.pointee.width = Int32(size.width)
        frame.pointee.height = Int32(size.height)
        frame.pointee.format = pixelFormat.rawValue
        if format == .jpeg { frame.pointee.color_range = AVCOL_RANGE_JPEG }
        try check(av_frame_get_buffer(frame, 0), "allocate a \(size) picture")
    }

    /// The file's bytes for `image` (of this encoder's size, any pixel format).
    func encode(_ image: PixelBuffer) throws(SwiftRecordError) -> Data {
        let frame = picture.pointer
        guard image.width == size.width, image.height == size.height else {
            throw SwiftRecordError(.pixelBufferMismatch, operation: "encode a \(format.rawValue) image",
                                   message: "the picture is \(image.width)x\(image.height); the encoder was made for \(size)")
        }
        // JPEG's colours: BT.601, full range.
        let scaler = try ScaleContext(from: size, image.pixelFormat, to: size, format == .png ? .rgb24 : .yuv420p,
                                      flags: sr_sws_point(), color: ColorProperties(standard: .bt601, fullRange: true))
        try image.withFrame { (source) throws(SwiftRecordError) in
            try scaler.scale(source, height: size.height, into: frame, operation: "encode a \(format.rawValue) image: sws_scale")
        }
        if format == .jpeg { frame.pointee.quality = context.pointer.pointee.global_quality }
        frame.pointee.pts = 0
        let c = context.pointer
        try check(avcodec_send_frame(c, frame), "encode a \(format.rawValue) image")
        try check(avcodec_send_frame(c, nil), "encode a \(format.rawValue) image")
        let received = try Packet()
        defer { withExtendedLifetime(received) {} }
        let packet = received.pointer
        var data = Data()
        while try codecStep(avcodec_receive_packet(c, packet), "encode a \(format.rawValue) image") == .ok {
            if let bytes = packet.pointee.data { data.append(bytes, count: Int(packet.pointee.size)) }
            av_packet_unref(packet)
        }
        guard !data.isEmpty else {
            throw SwiftRecordError(.ffmpeg, operation: "encode a \(format.rawValue) image", message: "the encoder gave no data")
        }
        return data
    }
}
