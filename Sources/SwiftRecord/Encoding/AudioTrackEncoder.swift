internal import CFFmpeg

/// One audio track's path to its encoder, on the writing pipeline's thread: converts
/// appended PCM (any format, rate, layout) to the encoder's with libswresample — the one
/// place audio is converted — keeps the track on its timestamps (`AudioClockSync`),
/// and cuts the result into the frames the encoder takes (1024 samples for AAC, 960 for
/// Opus at 48 kHz) through a FIFO, so nothing is dropped for framing. Not `Sendable`.
final class AudioTrackEncoder {
    let track: TrackEncoder
    private var codec: EncoderContext { track.codec }
    private let rate: Int
    private let frameSize: Int
    /// The encoder's sample format and layout: the FIFO holds samples in it.
    private let fifo: OpaquePointer
    private var resampler: OpaquePointer?
    private var resamplerInput: AudioFormat?
    private var sync = AudioClockSync()
    /// Samples put into the FIFO so far (the track's length once the resampler is drained).
    private var produced: Int64 = 0
    /// Samples sent to the encoder so far: the next frame's pts.
    private var sent: Int64 = 0
    /// Output samples a drop still has to remove.
    private var pendingDrop: Int64 = 0
    private var started = false
    private var lastReport: Int64 = 0
    private(set) var statistics = AudioSyncStatistics()
    /// Corrections made by the appends since `clearEvents()` (silence, drops, the periodic
    /// compensation state). Kept, not called back: nothing is allocated per buffer.
    private(set) var events: [AudioSyncEvent] = []
    /// The resampler's output, before the FIFO: grown when a buffer needs more, else reused.
    private let scratch: UnsafeMutablePointer<AVFrame>
    /// The frame each encoder frame is read into from the FIFO: one, reused while the
    /// encoder keeps no reference to its samples (`prepareEncodeFrame`).
    private let encodeFrame: UnsafeMutablePointer<AVFrame>

    init(codec: EncoderContext) throws(SwiftRecordError) {
        track = TrackEncoder(codec: codec)
        let ctx = codec.context
        rate = Int(ctx.pointee.sample_rate)
        frameSize = codec.audioFrameSize ?? max(1, rate / 50)
        guard let fifo = av_audio_fifo_alloc(ctx.pointee.sample_fmt, ctx.pointee.ch_layout.nb_channels, Int32(frameSize * 4)) else {
            throw SwiftRecordError(.ffmpeg, operation: "av_audio_fifo_alloc", message: "out of memory")
        }
        guard let scratch = av_frame_alloc() else {
            av_audio_fifo_free(fifo)
            throw SwiftRecordError(.ffmpeg, operation: "av_frame_alloc", message: "out of memory")
        }
        guard let encodeFrame = av_frame_alloc() else {
            av_audio_fifo_free(fifo)
            var f: UnsafeMutablePointer<AVFrame>? = scratch
            av_frame_free(&f)
            throw SwiftRecordError(.ffmpeg, operation: "av_frame_alloc", message: "out of memory")
        }
        self.fifo = fifo
        self.scratch = scratch
        self.encodeFrame = encodeFrame
        events.reserveCapacity(8)
    }

    deinit {
        av_audio_fifo_free(fifo)
        swr_free(&resampler)
        var f: UnsafeMutablePointer<AVFrame>? = scratch
        av_frame_free(&f)
        f = encodeFrame
        av_frame_free(&f)
    }

    /// Forgets the events reported so far (keeping their storage).
    func clearEvents() { events.removeAll(keepingCapacity: true) }

    private func report(_ event: AudioSyncEvent) { events.append(event) }

    typealias Emit = (UnsafeMutablePointer<AVPacket>) throws(SwiftRecordError) -> Void

    /// Converts and encodes `buffer`, whose first sample is stamped `ticks` (1/rate units
    /// from the session's start).
    func append(_ buffer: AudioSampleBuffer, ticks: Int64, followsGap: Bool, emit: Emit) throws(SwiftRecordError) {
        try configureResampler(for: buffer.format, emit: emit)
        guard let swr = resampler else { return }
        if !started {
            started = true
            // The track starts at the session's start: silence until the first sample.
            if ticks > 0 { try writeSilence(Int(clamping: ticks)) }
        } else {
            let landing = produced + Int64(swr_get_delay(swr, Int64(rate))) - pendingDrop
            let offset = Double(ticks - landing) / Double(rate)
            let duration = Double(buffer.frameCount) / Double(buffer.format.sampleRate)
            statistics.buffers += 1
            statistics.lastOffsetSeconds = offset
            statistics.maxAbsOffsetSeconds = max(statistics.maxAbsOffsetSeconds, abs(offset))
            switch sync.observe(offset: offset, duration: duration, followsGap: followsGap) {
            case .none: break
            case .insertSilence(let seconds):
                // Through the resampler, behind what it holds; at most a minute at a time,
                // so a wild timestamp cannot fill memory (the next buffers close the rest).
                let n = Int((min(seconds, 60) * Double(rate)).rounded())
                let inputCount = Int32(clamping: Int((min(seconds, 60) * Double(buffer.format.sampleRate)).rounded()))
                try check(swr_inject_silence(swr, inputCount), "swr_inject_silence")
                statistics.silenceInsertions += 1
                statistics.silenceInsertedSamples += n
                report(AudioSyncEvent(kind: .silenceInserted, trackTime: Double(landing) / Double(rate), offset: offset, samples: n, ratio: sync.ratio))
            case .drop(let seconds):
                let n = Int((min(seconds, 60) * Double(rate)).rounded())
                pendingDrop += Int64(n)
                statistics.dropEvents += 1
                statistics.droppedSamples += n
                report(AudioSyncEvent(kind: .samplesDropped, trackTime: Double(landing) / Double(rate), offset: offset, samples: n, ratio: sync.ratio))
            case .compensate(let ratio):
                statistics.ratio = ratio
                if ratio != 0 { statistics.compensatedBuffers += 1 }
                try check(swr_set_compensation(swr, Int32((ratio * Double(rate)).rounded()), Int32(rate)), "swr_set_compensation")
                if landing - lastReport >= Int64(rate) {
                    lastReport = landing
                    report(AudioSyncEvent(kind: .compensation, trackTime: Double(landing) / Double(rate), offset: offset, samples: 0, ratio: ratio))
                }
            }
        }
        try convert(dropping(from: buffer), with: swr)
        try encodeFullFrames(emit: emit)
    }

    /// Carries out a drop: the samples not yet encoded go first, then the start of `buffer`.
    private func dropping(from buffer: AudioSampleBuffer) throws(SwiftRecordError) -> AudioSampleBuffer {
        guard pendingDrop > 0 else { return buffer }
        let queued = min(pendingDrop, Int64(av_audio_fifo_size(fifo)))
        if queued > 0 {
            try check(av_audio_fifo_drain(fifo, Int32(queued)), "av_audio_fifo_drain")
            produced -= queued
            pendingDrop -= queued
        }
        guard pendingDrop > 0 else { return buffer }
        let inRate = Int64(buffer.format.sampleRate)
        let skip = min(buffer.frameCount, Int((pendingDrop * inRate + Int64(rate) / 2) / Int64(rate)))
        pendingDrop = skip == buffer.frameCount ? max(0, pendingDrop - Int64(skip) * Int64(rate) / inRate) : 0
        return buffer.slice(skip..<buffer.frameCount)
    }

    /// Drains the resampler and the FIFO (a short or silence-padded last frame), then the encoder.
    func flush(emit: Emit) throws(SwiftRecordError) {
        if let swr = resampler { try drain(swr) }
        try encodeFullFrames(emit: emit)
        let left = Int(av_audio_fifo_size(fifo))
        if left > 0 {
            if !codec.acceptsShortLastFrame { try writeSilence(frameSize - left) }
            try encodeFrame(samples: codec.acceptsShortLastFrame ? left : frameSize, emit: emit)
        }
        try track.encode(nil, emit: emit)
    }

    // MARK: - Conversion

    private func configureResampler(for format: AudioFormat, emit: Emit) throws(SwiftRecordError) {
        if resamplerInput == format, resampler != nil { return }
        try format.validate("append")
        if let old = resampler {
            // A new input format: what the old resampler holds goes out first.
            try drain(old)
            swr_free(&resampler)
        }
        let ctx = codec.context
        var outLayout = AVChannelLayout()
        try check(av_channel_layout_copy(&outLayout, &ctx.pointee.ch_layout), "av_channel_layout_copy")
        var inLayout = format.channelLayout.makeAVChannelLayout()
        defer { av_channel_layout_uninit(&outLayout); av_channel_layout_uninit(&inLayout) }
        var swr: OpaquePointer?
        try check(swr_alloc_set_opts2(&swr, &outLayout, ctx.pointee.sample_fmt, ctx.pointee.sample_rate,
                                      &inLayout, format.avSampleFormat, Int32(format.sampleRate), 0, nil), "swr_alloc_set_opts2")
        // Always through the resampler, so compensation can start at any time without a re-init.
        av_opt_set_int(UnsafeMutableRawPointer(swr), "flags", Int64(sr_swr_flag_resample()), 0)
        let status = swr_init(swr)
        if status < 0 { swr_free(&swr) }
        try check(status, "swr_init", hint: "cannot convert \(format) to the encoder's \(rate) Hz")
        resampler = swr
        resamplerInput = format
    }

    private func convert(_ buffer: AudioSampleBuffer, with swr: OpaquePointer) throws(SwiftRecordError) {
        let capacity = Int(swr_get_out_samples(swr, Int32(buffer.frameCount))) + 64
        try prepareScratch(capacity: capacity)
        let scratch = self.scratch
        let got: Int32 = buffer.withPlanePointers { inputs in
            swr_convert(swr, scratch.pointee.extended_data, Int32(capacity), inputs, Int32(buffer.frameCount))
        }
        try check(got, "swr_convert")
        try writeScratch(Int(got))
    }

    /// Takes everything the resampler still holds.
    private func drain(_ swr: OpaquePointer) throws(SwiftRecordError) {
        while true {
            let capacity = Int(swr_get_out_samples(swr, 0)) + 64
            try prepareScratch(capacity: capacity)
            let got = swr_convert(swr, scratch.pointee.extended_data, Int32(capacity), nil, 0)
            try check(got, "swr_convert")
            if got == 0 { return }
            try writeScratch(Int(got))
        }
    }

    private func prepareScratch(capacity: Int) throws(SwiftRecordError) {
        if scratch.pointee.nb_samples >= Int32(capacity), scratch.pointee.extended_data != nil { return }
        av_frame_unref(scratch)
        let ctx = codec.context
        scratch.pointee.format = ctx.pointee.sample_fmt.rawValue
        try check(av_channel_layout_copy(&scratch.pointee.ch_layout, &ctx.pointee.ch_layout), "av_channel_layout_copy")
        scratch.pointee.nb_samples = Int32(capacity)
        try check(av_frame_get_buffer(scratch, 0), "av_frame_get_buffer")
    }

    private func writeScratch(_ count: Int) throws(SwiftRecordError) {
        guard count > 0 else { return }
        let data = UnsafeMutableRawPointer(scratch.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let wrote = av_audio_fifo_write(fifo, data, Int32(count))
        try check(wrote, "av_audio_fifo_write")
        produced += Int64(count)
    }

    private func writeSilence(_ count: Int) throws(SwiftRecordError) {
        guard count > 0 else { return }
        try prepareScratch(capacity: count)
        let ctx = codec.context
        try check(av_samples_set_silence(scratch.pointee.extended_data, 0, Int32(count), ctx.pointee.ch_layout.nb_channels,
                                         ctx.pointee.sample_fmt), "av_samples_set_silence")
        try writeScratch(count)
    }

    // MARK: - Framing

    private func encodeFullFrames(emit: Emit) throws(SwiftRecordError) {
        while Int(av_audio_fifo_size(fifo)) >= frameSize {
            try encodeFrame(samples: frameSize, emit: emit)
        }
    }

    private func encodeFrame(samples: Int, emit: Emit) throws(SwiftRecordError) {
        let frame = encodeFrame
        try prepareEncodeFrame()
        frame.pointee.nb_samples = Int32(samples)
        let data = UnsafeMutableRawPointer(frame.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        try check(av_audio_fifo_read(fifo, data, Int32(samples)), "av_audio_fifo_read")
        frame.pointee.pts = sent
        sent += Int64(samples)
        try track.encode(frame, emit: emit)
    }

    /// Gives the encode frame storage for a whole encoder frame, unless it has storage no
    /// one else holds: the first time, and whenever the encoder kept a reference to the last
    /// frame's samples (a frame-threaded or delaying encoder), so those are never overwritten.
    private func prepareEncodeFrame() throws(SwiftRecordError) {
        let frame = encodeFrame
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
