internal import CFFmpeg

/// A new FFmpeg packet holding a copy of `bytes` (its own reference-counted buffer); the
/// caller owns it (`av_packet_free`). Where a packet is made from Swift bytes: a compressed
/// sample made from data, a held packet muxed again.
func makePacket(copying bytes: [UInt8]) throws(SwiftRecordError) -> UnsafeMutablePointer<AVPacket> {
    let made = bytes.withUnsafeBytes { source in Result { () throws(SwiftRecordError) in try makePacket(copying: source) } }
    return try made.get()
}

/// The same from memory not ours to keep (a camera's buffer, lent for one picture).
func makePacket(copying bytes: UnsafeRawBufferPointer) throws(SwiftRecordError) -> UnsafeMutablePointer<AVPacket> {
    guard let packet = av_packet_alloc() else {
        throw SwiftRecordError(.ffmpeg, operation: "av_packet_alloc", message: "out of memory")
    }
    let made = av_new_packet(packet, Int32(clamping: bytes.count))
    guard made >= 0 else {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        throw ffmpegError(made, "av_new_packet")
    }
    if let base = bytes.baseAddress, let target = packet.pointee.data { memcpy(target, base, Int(packet.pointee.size)) }
    return packet
}
