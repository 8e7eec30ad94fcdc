internal import CFFmpeg

/// In-memory segments (`AssetWriter(contentType:)`): where a segment is cut, what each one's
/// report says, and its hand-over.
extension Muxer {
    /// In-memory segments (`AssetWriter(contentType:)`): fragmented MP4 written into
    /// `output`, cut where `cuts` says, at a key packet of stream `stream`; each segment
    /// handed over whole with a report of what each stream has in it.
    struct SegmentPlan {
        let output: SegmentOutput
        let cuts: SegmentCuts
        let stream: Int32
        let profile: FileTypeProfile
        /// Per stream: pictures or sound.
        let mediaTypes: [MediaType]
    }

    /// Writes the output as `plan` says, into its `SegmentOutput` instead of a file: the
    /// output's IO becomes the context's, and the output lives as long as the context (its
    /// callbacks' `opaque`). Call before `writeHeader`.
    func writeSegments(_ plan: SegmentPlan) {
        callbackOwner = plan.output
        context.pointee.pb = plan.output.io
        segments = plan
    }

    /// With segments: cuts the one in progress before `packet` when it is a key packet of the
    /// cut stream at a cut, and counts `packet` in the (new) segment's report.
    func noteForSegment(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational) throws(SwiftRecordError) {
        guard let segments, packet.pointee.pts != sr_nopts_value() else { return }
        let pts = packet.pointee.pts
        if index == segments.stream, (packet.pointee.flags & sr_pkt_flag_key()) != 0,
           segments.cuts.cutBefore(keyPacketAt: pts), !segmentContents.isEmpty {
            try cutSegment()
        }
        let end = pts + max(0, packet.pointee.duration)
        if let c = segmentContents[index] {
            segmentContents[index] = (min(c.earliest, pts), max(c.end, end), c.timeBase, c.key)
        } else {
            segmentContents[index] = (pts, end, timeBase, (packet.pointee.flags & sr_pkt_flag_key()) != 0)
        }
    }

    /// Ends the segment in progress and hands it over with its report.
    func cutSegment() throws(SwiftRecordError) {
        guard let segments else { return }
        try flushFragment()
        if !moovWritten {
            // That flush wrote ftyp and moov only (`delay_moov`); this one the fragment.
            moovWritten = true
            try flushFragment()
        }
        let data = segments.output.take()
        let start = segments.cuts.sessionStart ?? .zero
        func time(_ ticks: Int64, _ tb: AVRational) -> MediaTime { MediaTime(value: ticks * Int64(tb.num), timescale: tb.den) }
        let reports = segmentContents.sorted { $0.key < $1.key }.map { stream, c in
            AssetSegmentTrackReport(trackID: Int(stream) + 1, mediaType: segments.mediaTypes[Int(stream)],
                                    earliestPresentationTimeStamp: start + time(c.earliest, c.timeBase),
                                    duration: time(c.end - c.earliest, c.timeBase), startsWithKeyFrame: c.key)
        }
        segmentContents = [:]
        segments.output.deliverSegment(data, report: AssetSegmentReport(segmentType: .separable, trackReports: reports))
    }
}
