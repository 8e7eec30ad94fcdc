internal import CFFmpeg

/// Decodes the first video stream of a media file in process (libavformat + libavcodec),
/// handing each decoded picture's luma plane to a closure. Used by `verify` to read the
/// frame index band back; the reading half of what `AVAssetReader` does.
package final class MediaFileReader {
    package let path: String
    private let input: Demuxer
    private let decoderOwner: CodecContext
    private var decoder: UnsafeMutablePointer<AVCodecContext> { decoderOwner.pointer }
    private let streamIndex: Int32
    /// Converts formats whose first plane is not 8-bit luma (RGB, 10-bit) to gray.
    private var toGray: ScaleContext?
    private var grayFrame: Frame?

    package init(path: String) throws(SwiftRecordError) {
        self.path = path
        input = try Demuxer(path: path, operation: "open \(path)", kind: .io)
        var codec: UnsafePointer<AVCodec>?
        do {
            try check(input.findStreamInfo(), "open \(path)")
            streamIndex = try check(av_find_best_stream(input.context, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0), "open \(path)")
        } catch {
            throw SwiftRecordError(.invalidData, operation: error.operation, message: "no decodable video stream (\(error.message))",
                                   ffmpegCode: error.ffmpegCode)
        }
        guard let codec, let stream = input.stream(Int(streamIndex)) else {
            throw SwiftRecordError(.unsupported, operation: "open \(path)", message: "no decoder for the video stream")
        }
        decoderOwner = try CodecContext(codec: codec)
        let dec = decoderOwner.pointer
        try check(avcodec_parameters_to_context(dec, stream.pointee.codecpar), "avcodec_parameters_to_context")
        dec.pointee.thread_count = 0
        try check(avcodec_open2(dec, codec, nil), "avcodec_open2(decoder)")
    }

    /// Calls `body` with each decoded picture's 8-bit luma plane, in presentation order
    /// as the decoder outputs it. Stops early when `body` returns false.
    package func forEachLumaPlane(_ body: (_ luma: UnsafePointer<UInt8>, _ bytesPerRow: Int, _ width: Int, _ height: Int) -> Bool) throws(SwiftRecordError) {
        let decoded = try Frame()
        defer { withExtendedLifetime(decoded) {} }
        let frame = decoded.pointer
        let packet = input.packet
        var going = true
        var flushing = false
        while going {
            if !flushing {
                // A read error ends the file as its end does: what was read is still decoded.
                let read = (try? codecStep(input.read(), "av_read_frame")) ?? .endOfStream
                switch read {
                case .endOfStream:
                    flushing = true
                    _ = try codecStep(avcodec_send_packet(decoder, nil), "avcodec_send_packet(flush)")
                case .ok:
                    defer { av_packet_unref(packet) }
                    if packet.pointee.stream_index != streamIndex { continue }
                    _ = try codecStep(avcodec_send_packet(decoder, packet), "avcodec_send_packet")
                case .again:
                    continue
                }
            }
            while going {
                let step = try codecStep(avcodec_receive_frame(decoder, frame), "avcodec_receive_frame")
                if step == .endOfStream { return }
                if step == .again { break }
                defer { av_frame_unref(frame) }
                going = try withLuma(frame, body)
            }
            if flushing && going {
                // The decoder said EAGAIN while flushing: nothing more will come.
                let step = try codecStep(avcodec_receive_frame(decoder, frame), "avcodec_receive_frame")
                if step != .ok { return }
                defer { av_frame_unref(frame) }
                going = try withLuma(frame, body)
            }
        }
    }

    /// Formats whose first plane is 8-bit luma, read in place; others go through swscale.
    private static let lumaFirst: Set<Int32> = Set([AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P,
                                                    AV_PIX_FMT_NV12, AV_PIX_FMT_NV21, AV_PIX_FMT_GRAY8, AV_PIX_FMT_YUVJ422P,
                                                    AV_PIX_FMT_YUVJ444P].map(\.rawValue))

    private func withLuma(_ frame: UnsafeMutablePointer<AVFrame>, _ body: (UnsafePointer<UInt8>, Int, Int, Int) -> Bool) throws(SwiftRecordError) -> Bool {
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        let fmt = AVPixelFormat(rawValue: frame.pointee.format)
        if MediaFileReader.lumaFirst.contains(fmt.rawValue), let data = sr_frame_data(frame, 0) {
            return body(data, Int(sr_frame_linesize(frame, 0)), w, h)
        }
        if toGray == nil {
            let size = VideoSize(width: w, height: h)
            toGray = try? ScaleContext(from: size, fmt, to: size, AV_PIX_FMT_GRAY8, flags: sr_sws_point(), describe: "\(size) to gray")
            grayFrame = try Frame()
            if let g = grayFrame?.pointer {
                g.pointee.width = Int32(w); g.pointee.height = Int32(h); g.pointee.format = AV_PIX_FMT_GRAY8.rawValue
                try check(av_frame_get_buffer(g, 0), "av_frame_get_buffer")
            }
        }
        guard let toGray, let g = grayFrame?.pointer, let data = sr_frame_data(g, 0) else {
            throw SwiftRecordError(.unsupported, operation: "decode", message: "cannot read luma from this pixel format")
        }
        try toGray.scale(frame, height: h, into: g, operation: "sws_scale(gray)")
        return body(data, Int(sr_frame_linesize(g, 0)), w, h)
    }
}

/// What `verify` found in a recording of the synthetic scene.
public struct FrameIndexReport: Sendable, CustomStringConvertible {
    /// Decoded index per frame, in output order; nil where no band could be read.
    public let indices: [Int?]
    /// Ranges of indices missing between consecutive frames (dropped frames).
    public var gaps: [ClosedRange<Int>] {
        var g: [ClosedRange<Int>] = []
        var last: Int?
        for case let i? in indices {
            if let l = last, i > l + 1 { g.append((l + 1)...(i - 1)) }
            last = max(last ?? i, i)
        }
        return g
    }
    /// Indices seen more than once in a row (repeated frames).
    public var repeats: [Int] {
        var r: [Int] = []
        var last: Int?
        for case let i? in indices { if i == last { r.append(i) }; last = i }
        return r
    }
    /// Indices that came after a larger one (reordered frames).
    public var reordered: [Int] {
        var r: [Int] = []
        var high: Int?
        for case let i? in indices { if let h = high, i < h { r.append(i) } else { high = i } }
        return r
    }
    public var unreadable: Int { indices.filter { $0 == nil }.count }
    public var isClean: Bool { gaps.isEmpty && repeats.isEmpty && reordered.isEmpty && unreadable == 0 && !indices.isEmpty }

    public var description: String {
        let read = indices.compactMap { $0 }
        var lines = ["frames: \(indices.count)"]
        if let f = read.first, let l = read.last { lines.append("indices: \(f)…\(l)") }
        lines.append("gaps: " + (gaps.isEmpty ? "none" : gaps.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }.joined(separator: ", ")))
        lines.append("repeats: " + (repeats.isEmpty ? "none" : repeats.map(String.init).joined(separator: ", ")))
        lines.append("reordered: " + (reordered.isEmpty ? "none" : reordered.map(String.init).joined(separator: ", ")))
        lines.append("unreadable: \(unreadable)")
        return lines.joined(separator: "\n")
    }
}

extension FrameIndexBand {
    /// Decodes a recording of the synthetic scene and reads each frame's index band.
    public static func verify(path: String) throws(SwiftRecordError) -> FrameIndexReport {
        let reader = try MediaFileReader(path: path)
        var indices: [Int?] = []
        try reader.forEachLumaPlane { luma, stride, w, h in
            indices.append(decode(luma: luma, bytesPerRow: stride, width: w, height: h))
            return true
        }
        return FrameIndexReport(indices: indices)
    }
}
