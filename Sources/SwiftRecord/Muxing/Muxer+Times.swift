internal import CFFmpeg

/// Where a muxer's packets are placed in time: audio priming, fragmented MP4's decode-time
/// shifts, Matroska's lead, and each stream's time base.
extension Muxer {
    /// An audio encoder starts `ticks` (its time base) before 0 with priming samples
    /// (AAC's 1024, Opus's pre-skip). A fragmented MP4/MOV cannot say so for AAC (no edit
    /// list in an empty moov) and libavformat would shift every track to make up for it;
    /// instead the stream is written from 0, priming audible, and the rewrite at the end
    /// (`MediaRepair` with `priming`) moves it back behind an edit list. Matroska keeps
    /// Opus's pre-skip itself (CodecDelay) from a stream starting at 0. Other outputs take
    /// the negative times as they are. Call before `writeHeader`.
    func setPriming(_ ticks: Int64, codec: AudioCodec, timeBase: Rational, stream index: Int32) {
        if ticks > 0 { priming[index] = (ticks, codec, timeBase.avRational) }
    }

    /// The priming `setPriming` moved into a fragmented MP4/MOV stream (for the rewrite to
    /// move back), in the stream's time base.
    func primingShift(ofStream index: Int32, from timeBase: Rational) -> Int64? {
        guard fragmentPlan != nil, let ticks = shifts[index] else { return nil }
        let name = String(cString: context.pointee.oformat.pointee.name)
        return name == "mp4" || name == "mov" ? av_rescale_q(ticks, timeBase.avRational, self.timeBase(ofStream: index)) : nil
    }

    func timeBase(ofStream index: Int32) -> AVRational {
        context.pointee.streams[Int(index)]?.pointee.time_base ?? AVRational(num: 1, den: 1)
    }

    /// The time base the container stores stream `index`'s packets in (after the header,
    /// which may change it: MP4 picks its own, Matroska uses milliseconds).
    func storedTimeBase(ofStream index: Int32) -> Rational { Rational(timeBase(ofStream: index)) }

    /// Moves `packet`'s times where this output writes them: by its stream's priming shift
    /// and first-decode-time shift (fragmented MP4/MOV), into the stream's time base, and
    /// later by Matroska's lead.
    func place(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational) {
        if let shift = shifts[index] {
            if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += shift }
            if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += shift }
        }
        if shiftsStarts {
            let start: Int64
            if let known = startShifts[index] {
                start = known
            } else {
                start = packet.pointee.dts != sr_nopts_value() ? max(0, -packet.pointee.dts) : 0
                startShifts[index] = start
            }
            if start != 0 {
                if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += start }
                if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += start }
            }
        }
        av_packet_rescale_ts(packet, timeBase, self.timeBase(ofStream: index))
        if leadMicroseconds > 0 {
            let lead = av_rescale_q(leadMicroseconds, Muxer.microseconds, self.timeBase(ofStream: index))
            if packet.pointee.pts != sr_nopts_value() { packet.pointee.pts += lead }
            if packet.pointee.dts != sr_nopts_value() { packet.pointee.dts += lead }
        }
    }
}
