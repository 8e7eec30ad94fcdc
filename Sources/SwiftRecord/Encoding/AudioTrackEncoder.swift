internal import CFFmpeg

/// One audio track's path to its encoder, on the writing pipeline's thread: its sources'
/// lanes (`AudioLane`: conversion, synchronisation, a FIFO each), and the cutting of the
/// result into the frames the encoder takes (1024 samples for AAC, 960 for Opus at
/// 48 kHz), so nothing is dropped for framing.
///
/// A track of one source reads its frames straight from its lane, in the encoder's
/// format. A mix of several sources (`mixVolumes`) keeps each lane in 32-bit float planar
/// at the encoder's rate and layout, each synchronised on its own exactly as a track of
/// its own would be; each encoder frame then takes the same stretch of every lane, and one
/// libswresample context sums them: the lanes side by side are one input of lanes ×
/// channels channels, and its matrix (`swr_set_matrix`) adds channel c of lane k, times
/// lane k's volume, into output channel c. The sum is not limited: in float it may pass
/// full scale, and is clipped where it becomes integers (the 16-bit input of an encoder
/// that takes integers; a player's output). A lane that lags more than `mixMaximumLag`
/// behind the others (a source that stopped delivering) is taken as silent for what it
/// missed, so the mix goes on; what it delivers late for that time is dropped by its
/// synchronisation, as a track drops an overlap. Not `Sendable`.
final class AudioTrackEncoder {
    let track: TrackEncoder
    private var codec: EncoderContext { track.codec }
    private let rate: Int
    private let frameSize: Int
    let lanes: [AudioLane]
    /// The summing context (nil with one lane).
    private var mixer: Resampler?
    /// Every lane's channels for one encoder frame, side by side (nil with one lane).
    private let mixPlanes: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    private let mixPlaneCount: Int
    /// Samples sent to the encoder so far: the next frame's pts.
    private var sent: Int64 = 0
    /// The frame each encoder frame is read into from the FIFO: one, reused while the
    /// encoder keeps no reference to its samples (`prepareEncodeFrame`).
    private let encoding: Frame

    /// How far one lane of a mix may fall behind the others before it is taken as silent
    /// (seconds): more than a live source's chunks and jitter (10–50 ms), little enough that
    /// the mix's live outputs and its crash-safe fragments do not wait long for a source
    /// that stopped.
    static let mixMaximumLag = 0.5

    /// A track of one source (`mixVolumes` nil) or a mix of `mixVolumes.count` sources, each
    /// summed with its volume (a linear factor).
    init(codec: EncoderContext, mixVolumes: [Double]? = nil) throws(SwiftRecordError) {
        track = TrackEncoder(codec: codec)
        let ctx = codec.context
        rate = Int(ctx.pointee.sample_rate)
        frameSize = codec.audioFrameSize ?? max(1, rate / 50)
        encoding = try Frame()
        let channels = Int(ctx.pointee.ch_layout.nb_channels)
        guard let volumes = mixVolumes else {
            mixPlanes = nil
            mixPlaneCount = 0
            lanes = [try AudioLane(rate: rate, sampleFormat: ctx.pointee.sample_fmt, layout: &ctx.pointee.ch_layout,
                                   frameSize: frameSize, mixLane: nil)]
            return
        }
        mixPlaneCount = volumes.count * channels
        let planes = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: max(1, mixPlaneCount))
        planes.initialize(repeating: nil, count: max(1, mixPlaneCount))
        mixPlanes = planes
        var made: [AudioLane] = []
        do {
            for k in volumes.indices {
                made.append(try AudioLane(rate: rate, sampleFormat: AV_SAMPLE_FMT_FLTP, layout: &ctx.pointee.ch_layout,
                                          frameSize: frameSize, mixLane: k))
            }
        } catch {
            planes.deallocate()
            throw error
        }
        lanes = made
        // (From here a throw runs `deinit`, which frees what was made.)
        try openMixer(volumes: volumes, channels: channels)
    }

    deinit {
        if let mixPlanes {
            av_freep(mixPlanes)
            mixPlanes.deallocate()
        }
    }

    /// The summing context and the lanes' frame storage (`mixPlanes`).
    private func openMixer(volumes: [Double], channels: Int) throws(SwiftRecordError) {
        guard let mixPlanes, volumes.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            throw SwiftRecordError(.invalidArgument, operation: "mix", message: "mix volumes must be finite factors of at least 0: \(volumes)")
        }
        let ctx = codec.context
        // The lanes side by side: channels with no names, only a count.
        var inLayout = AVChannelLayout()
        inLayout.order = AV_CHANNEL_ORDER_UNSPEC
        inLayout.nb_channels = Int32(mixPlaneCount)
        // Row o (output channel), column k × channels + c (lane k's channel c).
        var matrix = [Double](repeating: 0, count: channels * mixPlaneCount)
        for (k, volume) in volumes.enumerated() {
            for c in 0..<channels { matrix[c * mixPlaneCount + k * channels + c] = volume }
        }
        mixer = try Resampler(output: (ctx.pointee.ch_layout, ctx.pointee.sample_fmt, ctx.pointee.sample_rate),
                              input: (inLayout, AV_SAMPLE_FMT_FLTP, ctx.pointee.sample_rate),
                              matrix: (matrix, Int32(mixPlaneCount)), hint: "cannot mix \(volumes.count) sources into \(channels) channels")
        // One allocation holds every plane: av_samples_alloc fills the pointers.
        let data = UnsafeMutableRawPointer(mixPlanes).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        try check(av_samples_alloc(data, nil, Int32(mixPlaneCount), Int32(frameSize), AV_SAMPLE_FMT_FLTP, 0), "av_samples_alloc")
    }

    typealias Emit = TrackEncoder.Emit

    /// Converts and encodes `buffer` of lane `lane` (0 for a track of one source), whose
    /// first sample is stamped `ticks` (1/rate units from the session's start).
    func append(_ buffer: AudioSampleBuffer, lane: Int, ticks: Int64, followsGap: Bool, emit: Emit) throws(SwiftRecordError) {
        guard lanes.indices.contains(lane) else {
            throw SwiftRecordError(.invalidArgument, operation: "append", message: "mix lane \(lane) does not exist; the track mixes \(lanes.count)")
        }
        try lanes[lane].append(buffer, ticks: ticks, followsGap: followsGap)
        try encodeFullFrames(emit: emit)
    }

    /// Drains the lanes and the FIFOs (a short or silence-padded last frame), then the encoder.
    func flush(emit: Emit) throws(SwiftRecordError) {
        for lane in lanes { try lane.drain() }
        try encodeFullFrames(emit: emit)
        while true {
            var left = 0
            for lane in lanes { left = max(left, lane.queued) }
            guard left > 0 else { break }
            let samples = left < frameSize && codec.acceptsShortLastFrame ? left : frameSize
            for lane in lanes where lane.queued < samples { try lane.writeSilence(samples - lane.queued) }
            try encodeFrame(samples: samples, emit: emit)
        }
        try track.encode(nil, emit: emit)
    }

    // MARK: - Framing

    private func encodeFullFrames(emit: Emit) throws(SwiftRecordError) {
        let lag = Int(AudioTrackEncoder.mixMaximumLag * Double(rate))
        while true {
            var least = Int.max, most = 0
            for lane in lanes {
                least = min(least, lane.queued)
                most = max(most, lane.queued)
            }
            if least < frameSize {
                // A lane far behind the others: silence for the frame it misses.
                guard lanes.count > 1, most >= frameSize + lag else { return }
                for lane in lanes where lane.queued < frameSize {
                    try lane.fillLag(frameSize - lane.queued)
                }
            }
            try encodeFrame(samples: frameSize, emit: emit)
        }
    }

    private func encodeFrame(samples: Int, emit: Emit) throws(SwiftRecordError) {
        let frame = encoding.pointer
        try prepareEncodeFrame()
        frame.pointee.nb_samples = Int32(samples)
        let data = UnsafeMutableRawPointer(frame.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        if let mixer, let mixPlanes {
            let channels = mixPlaneCount / lanes.count
            for (k, lane) in lanes.enumerated() { try lane.read(samples, into: mixPlanes + k * channels) }
            let got = mixPlanes.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: mixPlaneCount) { input in
                swr_convert(mixer.context, frame.pointee.extended_data, Int32(samples), input, Int32(samples))
            }
            try check(got, "swr_convert")
            // (No rate change: every input sample comes out at once.)
            frame.pointee.nb_samples = got
        } else {
            try lanes[0].read(samples, into: data)
        }
        frame.pointee.pts = sent
        sent += Int64(frame.pointee.nb_samples)
        try track.encode(encoding, emit: emit)
    }

    /// Gives the encode frame storage for a whole encoder frame, unless it has storage no
    /// one else holds: the first time, and whenever the encoder kept a reference to the last
    /// frame's samples (a frame-threaded or delaying encoder), so those are never overwritten.
    private func prepareEncodeFrame() throws(SwiftRecordError) {
        let frame = encoding.pointer
        if frame.pointee.buf.0 != nil, av_frame_is_writable(frame) != 0 { return }
        av_frame_unref(frame)
        let ctx = codec.context
        frame.pointee.format = ctx.pointee.sample_fmt.rawValue
        try check(av_channel_layout_copy(&frame.pointee.ch_layout, &ctx.pointee.ch_layout), "av_channel_layout_copy")
        frame.pointee.sample_rate = ctx.pointee.sample_rate
        frame.pointee.nb_samples = Int32(frameSize)
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer")
    }
}
