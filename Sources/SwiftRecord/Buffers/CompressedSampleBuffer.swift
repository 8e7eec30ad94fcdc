internal import CFFmpeg

/// The `AVPacket` a compressed sample carries, shared by every copy of the sample: a
/// reference to the demuxer's packet data (no copy), or a copy of bytes given. Set up in
/// `init` and by the sample's `init`, never changed after; a writer takes its own reference
/// (`av_packet_ref`), and the `Packet` frees it once the last copy is gone.
/// `@unchecked Sendable` for that reason: once the sample is made, it is only read.
struct PacketStorage: @unchecked Sendable {
    private let owner: Packet

    /// The packet, to read (or to set up while the sample is being made).
    var packet: UnsafeMutablePointer<AVPacket> { owner.pointer }

    /// A new reference to `source`'s data (its times and flags copied too).
    init(referencing source: UnsafePointer<AVPacket>) throws(SwiftRecordError) {
        owner = try Packet(referencing: source)
    }

    /// A packet holding a copy of `bytes`.
    init(copying bytes: [UInt8]) throws(SwiftRecordError) {
        owner = try Packet(copying: bytes)
    }

    /// Makes `packet` a new reference to this sample's data, shown at `pts` and decoded at
    /// `dts` (a pass-through track's ticks on the session's timeline).
    func reference(into packet: Packet, pts: Int64, dts: Int64) throws(SwiftRecordError) {
        try packet.reference(owner, pts: pts, dts: dts)
    }
}

/// One compressed sample (an encoded picture or a run of encoded sound) with its times, as
/// a demuxer read it: what a reader's track output gives with `outputSettings: nil`, and
/// what a pass-through `AssetWriterInput` (`outputSettings: nil`) muxes as it is.
///
/// The counterpart of a `CMSampleBuffer` holding a `CMBlockBuffer` on Apple platforms.
public struct CompressedSampleBuffer: Sendable {
    /// The codec and its parameters (`CMSampleBufferGetFormatDescription`).
    public let formatDescription: FormatDescription
    let storage: PacketStorage
    /// Presentation and decode times and the duration in ticks of the format's time base,
    /// exactly as read (`pts` and `dts` are `AV_NOPTS_VALUE` where unknown).
    let ptsTicks: Int64
    let dtsTicks: Int64
    let durationTicks: Int64
    /// Whether decoding can start here (`kCMSampleAttachmentKey_NotSync` absent).
    public let isKeyFrame: Bool

    init(storage: PacketStorage, formatDescription: FormatDescription) {
        self.storage = storage
        self.formatDescription = formatDescription
        let p = storage.packet.pointee
        let nopts = sr_nopts_value()
        ptsTicks = p.pts != nopts ? p.pts : p.dts
        dtsTicks = p.dts != nopts ? p.dts : p.pts
        durationTicks = p.duration
        isKeyFrame = (p.flags & sr_pkt_flag_key()) != 0
    }

    /// A sample from its bytes and times (times must be whole ticks of the format's time
    /// base, `formatDescription.timeScale`; a decode time of nil is the presentation time).
    public init(data: [UInt8], formatDescription: FormatDescription, presentationTimeStamp: MediaTime,
                decodeTimeStamp: MediaTime? = nil, duration: MediaTime = .zero, isKeyFrame: Bool) throws(SwiftRecordError) {
        guard let pts = formatDescription.ticks(presentationTimeStamp),
              let dts = formatDescription.ticks(decodeTimeStamp ?? presentationTimeStamp),
              let length = formatDescription.ticks(duration) else {
            throw SwiftRecordError(.invalidArgument, operation: "CompressedSampleBuffer",
                                   message: "the times must be numeric; got \(presentationTimeStamp), \(decodeTimeStamp ?? presentationTimeStamp), \(duration)")
        }
        let storage = try PacketStorage(copying: data)
        storage.packet.pointee.pts = pts
        storage.packet.pointee.dts = dts
        storage.packet.pointee.duration = length
        if isKeyFrame { storage.packet.pointee.flags |= sr_pkt_flag_key() }
        self.init(storage: storage, formatDescription: formatDescription)
    }

    /// When the sample is shown (`CMSampleBufferGetPresentationTimeStamp`).
    public var presentationTimeStamp: MediaTime { formatDescription.time(ofTicks: ptsTicks) }
    /// When the sample is decoded (`CMSampleBufferGetDecodeTimeStamp`): before its
    /// presentation time in a stream with B-frames.
    public var decodeTimeStamp: MediaTime { formatDescription.time(ofTicks: dtsTicks) }
    /// How long it lasts (`CMSampleBufferGetDuration`); zero where the container did not say.
    public var duration: MediaTime { formatDescription.time(ofTicks: durationTicks) }
    /// Bytes of compressed data (`CMSampleBufferGetTotalSampleSize`).
    public var dataLength: Int { Int(storage.packet.pointee.size) }

    /// Runs `body` with the compressed bytes (`CMBlockBufferGetDataPointer`).
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.packet.pointee.data, count: Int(storage.packet.pointee.size)))
    }
}
