internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of an `AVPacket`: allocated in `init`, freed in `deinit`, and nowhere else
/// (`scripts/check-c-owners.py` fails `make test` on an `av_packet_alloc` or
/// `av_packet_free` outside this file). What the packet references (its data) is its
/// holder's business: `unref()` lets it go and keeps the packet for reuse, and a muxer's
/// write takes it.
///
/// Not `Sendable`: its holder says which thread uses it.
final class Packet {
    /// The packet, valid as long as this object lives: lent to FFmpeg calls, never freed
    /// or kept beyond it.
    let pointer: UnsafeMutablePointer<AVPacket>

    /// A blank packet (`av_packet_alloc`).
    init() throws(SwiftRecordError) {
        guard let packet = av_packet_alloc() else {
            throw SwiftRecordError(.ffmpeg, operation: "av_packet_alloc", message: "out of memory")
        }
        pointer = packet
    }

    /// A new reference to `source`'s data, its times and flags copied too (`av_packet_ref`).
    convenience init(referencing source: UnsafePointer<AVPacket>) throws(SwiftRecordError) {
        try self.init()
        try check(av_packet_ref(pointer, source), "av_packet_ref")
    }

    /// A packet holding a copy of `bytes` in a reference-counted buffer of its own.
    convenience init(copying bytes: [UInt8]) throws(SwiftRecordError) {
        try self.init()
        try set(copying: bytes)
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }

    /// Lets go of what the packet references and resets its fields (`av_packet_unref`).
    func unref() { av_packet_unref(pointer) }

    /// Makes the packet a new reference to `source`'s data (no copy; its flags and duration
    /// copied too), shown at `pts` and decoded at `dts` (`av_packet_ref`), letting go of
    /// what it held.
    func reference(_ source: Packet, pts: Int64, dts: Int64) throws(SwiftRecordError) {
        av_packet_unref(pointer)
        try check(av_packet_ref(pointer, source.pointer), "av_packet_ref")
        pointer.pointee.pts = pts
        pointer.pointee.dts = dts
    }

    /// Makes the packet hold a copy of `bytes` (a queued packet's), in a buffer of its own,
    /// its times and flags reset.
    func set(copying bytes: [UInt8]) throws(SwiftRecordError) {
        // (`withUnsafeBytes` rethrows untyped errors: the typed one is carried out in a `Result`.)
        let made = bytes.withUnsafeBytes { source in Result { () throws(SwiftRecordError) in try set(copying: source) } }
        try made.get()
    }

    /// The same from memory not ours to keep (a camera's buffer, lent for one picture).
    func set(copying bytes: UnsafeRawBufferPointer) throws(SwiftRecordError) {
        av_packet_unref(pointer)
        try check(av_new_packet(pointer, Int32(clamping: bytes.count)), "av_new_packet")
        if let base = bytes.baseAddress, let target = pointer.pointee.data { memcpy(target, base, Int(pointer.pointee.size)) }
    }
}
