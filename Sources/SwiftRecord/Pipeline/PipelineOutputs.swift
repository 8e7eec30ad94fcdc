import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A track as opened: the time base its frames' pts are given in, and the one its
/// container stores (after the header, which may change it: MP4 picks its own, MKV
/// uses milliseconds). Two frames must differ in both to be told apart in the file.
struct OpenedTrack: Sendable {
    let encoderTimeBase: Rational
    let streamTimeBase: Rational
    /// The encoder's parameters, for a live output's own container.
    let parameters: StreamParameters
}

/// What the writing pipeline's thread owns: one `TrackEncoder` per track (`Track`), the
/// output they are muxed into, and the one frame and packet every picture and pass-through
/// sample goes through. Made, used and closed on that thread only; not `Sendable`.
final class PipelineOutputs {
    private var tracks: [Track] = []
    private var muxer: Muxer?
    /// Packets muxed into the file, all tracks: none at the end means nothing was written.
    private(set) var packetsWritten = 0
    /// `packetsWritten` at the last flush made because no packet came (`flushIdleFragment`),
    /// and when the last packet came (monotonic ns).
    private var packetsAtIdleFlush = 0
    private var lastPacketNanoseconds: Int64 = 0
    /// The frame each picture is sent to its encoder in (borrowing its planes): one, reused.
    private let frame: Frame
    /// The packet each pass-through sample is muxed from (a reference to its data): one, reused.
    private let passThroughPacket: Packet
    private let configuration: PipelineConfiguration
    let openedTracks: [OpenedTrack]
    /// Hears each audio track's corrections (track index, mix lane, the correction, the lane's totals).
    var audioSync: (Int, Int, AudioSyncEvent?, AudioSyncStatistics) -> Void = { _, _, _, _ in }

    /// Opens an encoder per track and the output, and writes the header. On a throw,
    /// whatever was opened is closed again, and the file the opening created is removed:
    /// in one place, the `catch` below (the frame, the packet, the encoders and streams
    /// made so far free themselves as they go).
    init(_ configuration: PipelineConfiguration) throws(SwiftRecordError) {
        self.configuration = configuration
        frame = try Frame()
        passThroughPacket = try Packet()
        var opened: Muxer?
        let muxer: Muxer
        var tracks: [Track] = []
        do {
            // The file first, then the muxer on it through the descriptor that holds it: a
            // name another program takes over meanwhile is never opened for writing.
            try configuration.file?.createEmpty()
            muxer = try Muxer(url: configuration.file?.ioPath ?? configuration.url.absoluteString,
                              fileType: configuration.fileType, displayURL: configuration.file?.writingPath)
            opened = muxer
            for track in configuration.tracks { tracks.append(try PipelineOutputs.open(track, into: muxer, fileType: configuration.fileType)) }
            for attachment in configuration.attachments { try muxer.addAttachment(attachment) }
            if let segments = configuration.segments {
                muxer.writeSegments(Muxer.SegmentPlan(output: try SegmentOutput(deliver: segments.deliver), cuts: segments.cuts,
                                                      stream: tracks[segments.track].stream, profile: segments.profile,
                                                      mediaTypes: tracks.map(\.mediaType)))
            }
            var options: [String: String] = [:]
            if configuration.optimizeForNetworkUse && configuration.fragments == nil
                && (configuration.fileType == .mp4 || configuration.fileType == .mov) {
                options["movflags"] = "+faststart"
            }
            try muxer.writeHeader(metadata: configuration.metadata, options: options, fragments: configuration.fragments)
        } catch {
            try? opened?.finish()
            configuration.file?.discard()
            throw error
        }
        self.tracks = tracks
        self.muxer = muxer
        openedTracks = tracks.map {
            OpenedTrack(encoderTimeBase: $0.timeBase, streamTimeBase: muxer.storedTimeBase(ofStream: $0.stream), parameters: $0.parameters)
        }
    }

    /// Encodes `sample` at `ticks` on `track` and muxes what the encoder gives back.
    func encode(_ sample: TrackSample, ticks: Int64, track index: Int) throws(SwiftRecordError) {
        defer { sample.release() }
        guard tracks.indices.contains(index), let muxer else {
            throw SwiftRecordError(.invalidState, operation: "encode", message: "no open track \(index)")
        }
        let faults = tracks[index].faults
        if let delay = faults.encodeDelay { Thread.sleep(forTimeInterval: delay.seconds) }
        if let failAt = faults.failEncodeAtFrame, tracks[index].framesEncoded == failAt {
            throw SwiftRecordError(.ffmpeg, operation: "avcodec_send_frame(simulated)", message: "simulated encoder failure")
        }
        tracks[index].framesEncoded += 1
        let track = tracks[index]
        switch sample {
        case .picture(let appended):
            var picture = appended
            if let (transform, pool) = track.pixelTransform {
                // Turned or mirrored into a buffer of its own (Matroska, WebM), read from
                // the picture as it was appended.
                let turned = try pool.makePixelBuffer()
                try transform.apply(planes: appended.planes, into: turned)
                picture = try turned.pin()
            }
            defer { if picture.buffer !== appended.buffer { picture.unpin() } }
            // The encoder takes its own reference as the frame is sent; this one only
            // borrows the pinned picture's planes for the call.
            frame.borrow(picture.pinnedFrame)
            defer { frame.endBorrow() }
            // A segment that starts here must begin with a key frame.
            let startsSegment = configuration.segments.map { $0.track == index && $0.cuts.startsSegment(ticks: ticks) } ?? false
            frame.stamp(ticks: ticks, key: startsSegment)
            try encode(frame, track: track, into: muxer)
        case .audio(let buffer, let followsGap, let laneIndex):
            guard let audio = track.audio, audio.lanes.indices.contains(laneIndex) else {
                throw SwiftRecordError(.invalidState, operation: "encode", message: "track \(index) is not an audio track with a source \(laneIndex)")
            }
            let lane = audio.lanes[laneIndex]
            let before = lane.statistics
            let timeBase = track.timeBase
            lane.clearEvents()
            try audio.append(buffer, lane: laneIndex, ticks: ticks, followsGap: followsGap) { (packet) throws(SwiftRecordError) in
                try write(packet, track: track, into: muxer, from: timeBase)
            }
            for event in lane.events { audioSync(index, laneIndex, event, lane.statistics) }
            if lane.events.isEmpty && lane.statistics != before { audioSync(index, laneIndex, nil, lane.statistics) }
        case .compressed(let sample, let decodeTicks):
            guard track.encoder == nil else {
                throw SwiftRecordError(.invalidState, operation: "encode", message: "track \(index) encodes; it takes no compressed samples")
            }
            // A new reference to the sample's data (no copy), restamped on the session's timeline.
            try sample.storage.reference(into: passThroughPacket, pts: ticks, dts: decodeTicks)
            try write(passThroughPacket, track: track, into: muxer, from: track.timeBase)
        }
    }

    /// Packets `track`'s encoder has given out so far.
    func packetsOut(track index: Int) -> Int? {
        guard tracks.indices.contains(index) else { return nil }
        return tracks[index].encoder?.packetsOut ?? tracks[index].framesEncoded
    }

    private func encode(_ frame: Frame?, track: Track, into muxer: Muxer) throws(SwiftRecordError) {
        guard let encoder = track.encoder else { return }
        let timeBase = track.timeBase
        try encoder.encode(frame) { (packet) throws(SwiftRecordError) in
            try write(packet, track: track, into: muxer, from: timeBase)
        }
    }

    /// Offers a copy of `packet` to every live output, then muxes it into the file (which
    /// takes its data): the file gets exactly what it got without live outputs.
    private func write(_ packet: Packet, track: Track, into muxer: Muxer, from timeBase: Rational) throws(SwiftRecordError) {
        if !configuration.sinks.isEmpty {
            let copy = EncodedPacket(copying: packet, track: Int(track.stream), isVideo: track.isVideo, timeBase: timeBase)
            for sink in configuration.sinks { sink.offer(copy) }
        }
        try muxer.write(packet, stream: track.stream, from: timeBase)
        packetsWritten += 1
        lastPacketNanoseconds = MonotonicClock.nanoseconds()
    }

    /// Crash-safe writing: when the packets stop (a source stuck in a grab, the encoder
    /// holding its look-ahead) the fragment in progress would reach the file only with the
    /// next packet; past a fragment interval of wall-clock time without one, it is flushed
    /// as it is. Nil without fragments, or with nothing waiting.
    var idleFlushDeadline: Int64? {
        guard let plan = configuration.fragments, muxer != nil, packetsWritten > packetsAtIdleFlush else { return nil }
        return lastPacketNanoseconds + plan.interval * 1000
    }

    /// Flushes the fragment in progress (see `idleFlushDeadline`).
    func flushIdleFragment() throws(SwiftRecordError) {
        guard let muxer, packetsWritten > packetsAtIdleFlush else { return }
        packetsAtIdleFlush = packetsWritten
        try muxer.flushFragment()
    }

    /// Ends the run of `track`'s video encoder (a pause): every frame it holds back is
    /// written now, so the file and the replay buffers have all that was recorded before
    /// the pause, the last frame lasting until `until` ticks (where the next one goes).
    /// The next frame starts a new encoder, opened with the same settings, on a key frame.
    /// Nothing happens for an audio track, after the session's end, or when a new encoder
    /// would not write the same parameter sets the file's header holds (its frames could
    /// not be decoded with them): the old encoder then goes on holding its frames.
    /// Returns whether the run was ended.
    @discardableResult
    func endRun(track index: Int, until: Int64?) throws(SwiftRecordError) -> Bool {
        guard tracks.indices.contains(index), let muxer, tracks[index].audio == nil,
              let encoder = tracks[index].encoder, encoder.endTicks == nil,
              case .video(var settings) = configuration.tracks[index].settings else { return false }
        let track = tracks[index]
        if track.pixelTransform != nil, configuration.tracks[index].transform.swapsSides {
            (settings.width, settings.height) = (settings.height, settings.width)
        }
        let old = encoder.codec
        let fresh = try EncoderContext.video(settings: settings, globalHeader: muxer.wantsGlobalHeader)
        guard fresh.extradata == old.extradata, fresh.timeBase == old.timeBase else {
            Log.writer.warning("the \(old.name) encoder's look-ahead is kept through the pause: a new encoder would write other parameter sets than the file's header holds")
            return false
        }
        let timeBase = old.timeBase
        try encoder.endRun(until: until, replacingWith: fresh) { (packet) throws(SwiftRecordError) in
            try write(packet, track: track, into: muxer, from: timeBase)
        }
        return true
    }

    /// The session's end, in each track's ticks.
    func endSession(ticks: [Int64?]) {
        for (track, t) in zip(tracks, ticks) { track.encoder?.endTicks = t }
    }

    /// Drains every encoder into the output; then the live outputs and replay buffers have
    /// every packet (they finish sending while the file is closed).
    func flushEncoders() throws(SwiftRecordError) {
        guard let muxer else { return }
        defer { for sink in configuration.sinks { sink.endOfStream() } }
        for track in tracks {
            if let audio = track.audio {
                let timeBase = track.timeBase
                try audio.flush { (packet) throws(SwiftRecordError) in
                    try write(packet, track: track, into: muxer, from: timeBase)
                }
            } else {
                try encode(nil, track: track, into: muxer)
            }
        }
    }

    /// Writes the trailer and closes the output. A fragmented MP4/MOV then becomes an
    /// ordinary one: same packets, one index (at the front when optimised for network
    /// use). If that rewrite cannot be done (the disk is too full for a second copy), the
    /// fragmented file stays: it is a complete, playable MP4 too, only less widely seekable.
    /// A `complete` file that replaces an existing one now takes its place; an incomplete
    /// one (writing failed) stays beside it, and the existing file stays as it was.
    func close(complete: Bool) throws(SwiftRecordError) {
        guard let muxer else { return }
        self.muxer = nil
        // Audio priming the fragments play (`Muxer.setPriming`): the rewritten file hides it
        // behind an edit list.
        var priming: [Int: Int64] = [:]
        for track in tracks {
            if let p = muxer.primingShift(ofStream: track.stream, from: track.timeBase) { priming[Int(track.stream)] = p }
        }
        tracks.removeAll()
        let c = configuration
        do {
            try muxer.finish()
        } catch {
            // Writing failed part-way (a full disk): what follows the last whole fragment is a
            // cut-off sample that decoders report; the file keeps only whole fragments.
            if let file = c.file, let length = muxer.completeLength { file.truncateOwn(to: length) }
            throw error
        }
        guard let file = c.file else { return }
        // Only this run's own file is rewritten: not one another program put at its name.
        try file.checkUnchanged()
        if c.fragments != nil, c.fileType == .mp4 || c.fileType == .mov {
            let written = URL(fileURLWithPath: file.writingPath)
            if (try? MediaRepair.repair(input: written, output: written, fileType: c.fileType,
                                        optimizeForNetworkUse: c.optimizeForNetworkUse, priming: priming)) != nil {
                file.reclaim()
            }
        }
        if complete { try file.commit() }
    }

    /// Closes the output without finishing it and removes the file writing created.
    func discard() {
        guard let muxer else { return }
        self.muxer = nil
        tracks.removeAll()
        muxer.abandon()
        configuration.file?.discard()
    }
}
