internal import CFFmpeg

/// One track's encoder: owns the codec context, runs FFmpeg's send/receive drain loop,
/// gives every packet its duration and trims what falls after the session's end.
/// Independent of the media type: an audio track is a second instance with an audio
/// `EncoderContext`. Lives on the writing pipeline's thread; not `Sendable`.
///
/// Packet durations are decode durations: the gap from a packet's decode time to the
/// next packet's. That is what MP4/MOV store per sample, and what the mov muxer uses
/// for the last sample of a fragment to place the next fragment (its `tfdt`); a
/// presentation-order gap there puts the next fragment on top of earlier packets once
/// frames are reordered (B-frames) and the frame spacing is uneven (drops, stalls). So
/// each packet waits in `held` until its successor shows its decode time. The very
/// last packet lasts until the session's end, or one frame.
final class TrackEncoder {
    /// The encoder of the current run (a new one after `endRun`).
    private(set) var codec: EncoderContext
    /// Presentation times (in the codec's ticks) of the frames sent, increasing; bounded.
    private var presentationTimes: [Int64] = []
    /// The newest packet out of the encoder, waiting for its successor's decode time.
    private var held: Packet?
    /// Packets given out and emptied, for the encoder's next ones.
    private var sparePackets: [Packet] = []
    /// The session's end in ticks: frames at or after it are not written, and the last
    /// frame lasts until it.
    var endTicks: Int64?
    /// At most this many ticks from one key frame to the next (`maxKeyFrameIntervalDuration`):
    /// a frame that far from the last key frame is sent as one.
    var keyFrameInterval: Int64?
    /// The encoder's own key-frame period in frames (`maxKeyFrameInterval`: libx264's keyint),
    /// when it has one beside `keyFrameInterval`.
    var encoderKeyFramePeriod: Int?
    /// The last key frame sent or received, in ticks.
    private var lastKeyFrame: Int64?
    /// Frames sent since the last key frame sent; nil: the next frame starts the encoder's run
    /// (a key frame of its own).
    private var framesSinceKeyFrame: Int?
    /// Packets received from the encoder.
    private(set) var packetsOut = 0
    /// The decode time of the last packet given out, and whether the current run is a
    /// later one (`endRun`): its first packets must decode after the previous run's last.
    private var lastDts: Int64?
    private var laterRun = false

    /// Presentation times kept: no encoder holds back anywhere near this many frames.
    static let presentationHistory = 4096

    init(codec: EncoderContext) {
        self.codec = codec
        // Its whole history at once (32 KiB), so remembering a frame never grows it.
        presentationTimes.reserveCapacity(TrackEncoder.presentationHistory + 1)
    }

    /// Takes each packet out of the encoder, in decode order. It must consume the packet's
    /// data before returning (the muxer takes it); the packet is reused after.
    typealias Emit = (Packet) throws(SwiftRecordError) -> Void

    /// Encodes `frame` (its `pts` in the codec's ticks), or flushes the encoder when nil,
    /// and hands each finished packet to `emit` in decode order.
    func encode(_ frame: Frame?, emit: Emit) throws(SwiftRecordError) {
        let frame = frame?.pointer
        if let frame {
            remember(frame.pointee.pts)
            forceKeyFrameIfDue(frame)
        }
        while true {
            let step = try codec.send(frame)
            try drain(emit: emit)
            if step != .again { break }
        }
        if frame == nil, let last = held {
            held = nil
            if let end = endTicks, last.pointer.pointee.pts >= end {
                // The session ended before this packet, after it was received.
                last.unref()
                sparePackets.append(last)
                return
            }
            last.pointer.pointee.duration = finalDuration(of: last.pointer)
            try emitAndRecycle(last, emit: emit)
        }
    }

    /// Ends the encoder's run: every frame it holds back (its look-ahead) comes out and is
    /// handed to `emit`, the last one lasting until `until` (ticks; the next frame's time)
    /// or one frame; then `fresh` takes the old encoder's place, and the next frame sent
    /// starts its run with a key frame. `fresh` must have been opened with the same
    /// settings (same time base and parameter sets): decode times go on increasing, as
    /// both encoders hold frames back by the same number of frames.
    func endRun(until: Int64?, replacingWith fresh: EncoderContext, emit: Emit) throws(SwiftRecordError) {
        let sessionEnd = endTicks
        if sessionEnd == nil { endTicks = until }
        defer { endTicks = sessionEnd }
        try encode(nil, emit: emit)
        codec = fresh
        laterRun = true
        framesSinceKeyFrame = nil
    }

    /// Sends `frame` as a key frame when `keyFrameInterval` has passed since the last one.
    /// The encoder's own key frames count: the first of its run and those of its period in
    /// frames as they are sent (so that a frame whose time is a little late, a capture time,
    /// is not forced to be a key frame just after the encoder's own), any other (a scene cut)
    /// once it comes out.
    private func forceKeyFrameIfDue(_ frame: UnsafeMutablePointer<AVFrame>) {
        guard let interval = keyFrameInterval else { return }
        let pts = frame.pointee.pts
        guard let sent = framesSinceKeyFrame.map({ $0 + 1 }), lastKeyFrame != nil else {
            (lastKeyFrame, framesSinceKeyFrame) = (pts, 0)
            return
        }
        framesSinceKeyFrame = sent
        if let period = encoderKeyFramePeriod, sent >= period {
            (lastKeyFrame, framesSinceKeyFrame) = (pts, 0)
            return
        }
        if let last = lastKeyFrame, pts - last < interval { return }
        frame.pointee.pict_type = AV_PICTURE_TYPE_I
        (lastKeyFrame, framesSinceKeyFrame) = (pts, 0)
    }

    private func remember(_ pts: Int64) {
        presentationTimes.append(pts)
        if presentationTimes.count > TrackEncoder.presentationHistory {
            presentationTimes.removeFirst(TrackEncoder.presentationHistory / 2)
        }
    }

    /// Receives every packet the encoder has ready.
    private func drain(emit: Emit) throws(SwiftRecordError) {
        while true {
            let received: Packet
            if let spare = sparePackets.popLast() { received = spare } else { received = try Packet() }
            let packet = received.pointer
            let step: CodecStep
            do { step = try codec.receive(packet) } catch { sparePackets.append(received); throw error }
            guard step == .ok else {
                sparePackets.append(received)
                return
            }
            packetsOut += 1
            if packet.pointee.flags & AV_PKT_FLAG_KEY != 0, packet.pointee.pts > lastKeyFrame ?? .min {
                // A key frame of the encoder's own choosing (a scene cut): its period restarts there.
                let pts = packet.pointee.pts
                lastKeyFrame = pts
                framesSinceKeyFrame = presentationTimes.reversed().prefix { $0 > pts }.count
            }
            if let end = endTicks, packet.pointee.pts >= end {
                received.unref()
                sparePackets.append(received)
                continue
            }
            if let previous = held {
                previous.pointer.pointee.duration = decodeDuration(of: previous.pointer, before: packet)
                held = received
                try emitAndRecycle(previous, emit: emit)
            } else {
                held = received
            }
        }
    }

    private func emitAndRecycle(_ owner: Packet, emit: Emit) throws(SwiftRecordError) {
        let packet = owner.pointer
        // A later run's encoder starts its decode times before its first frame by its own
        // first frames' spacing; where the frames were unevenly spaced (a content-driven
        // rate) that can fall before the previous run's last: moved up to just after it
        // (never past the packet's own presentation time).
        if laterRun, let last = lastDts, packet.pointee.dts != sr_nopts_value(), packet.pointee.dts <= last,
           last + 1 <= packet.pointee.pts {
            packet.pointee.dts = last + 1
        }
        if packet.pointee.dts != sr_nopts_value() { lastDts = packet.pointee.dts }
        defer {
            owner.unref()
            sparePackets.append(owner)
        }
        try emit(owner)
    }

    /// The gap to the next packet's decode time; the presentation gap where decode times
    /// are missing or do not increase (an encoder that leaves dts unset).
    private func decodeDuration(of packet: UnsafeMutablePointer<AVPacket>, before next: UnsafeMutablePointer<AVPacket>) -> Int64 {
        let dts = packet.pointee.dts, nextDts = next.pointee.dts
        if dts != sr_nopts_value(), nextDts != sr_nopts_value(), nextDts > dts {
            return nextDts - dts
        }
        return presentationGap(after: packet.pointee.pts) ?? frameDuration
    }

    /// The last packet lasts until the next frame sent (one shown after it), else until
    /// the session's end, else one frame. An audio encoder's last packet says itself how
    /// many real samples it holds (the rest is padding), and its times are moved by the
    /// priming, so frames sent say nothing of it: its own duration, cut at the session's end.
    private func finalDuration(of packet: UnsafeMutablePointer<AVPacket>) -> Int64 {
        let pts = packet.pointee.pts
        if codec.context.pointee.codec_type == AVMEDIA_TYPE_AUDIO, packet.pointee.duration > 0 {
            if let end = endTicks, end > pts { return min(packet.pointee.duration, end - pts) }
            return packet.pointee.duration
        }
        if let gap = presentationGap(after: pts) { return gap }
        if let end = endTicks, end > pts { return end - pts }
        return frameDuration
    }

    /// One frame: the nominal duration at the expected rate, else the last gap between frames.
    private var frameDuration: Int64 {
        if let nominal = codec.nominalFrameDuration { return nominal }
        let n = presentationTimes.count
        return n >= 2 ? max(1, presentationTimes[n - 1] - presentationTimes[n - 2]) : 1
    }

    /// The time from `pts` to the first frame sent after it, if one was.
    private func presentationGap(after pts: Int64) -> Int64? {
        var lo = 0, hi = presentationTimes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if presentationTimes[mid] <= pts { lo = mid + 1 } else { hi = mid }
        }
        return lo < presentationTimes.count ? presentationTimes[lo] - pts : nil
    }
}
