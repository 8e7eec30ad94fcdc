internal import CFFmpeg

/// One source's sound on its way to an audio track, on the writing pipeline's thread:
/// converts appended PCM (any format, rate, layout) with libswresample — the one place
/// audio is converted — to the lane's format, keeps it on its timestamps
/// (`AudioClockSync`: drift steered by resampling, gaps filled with silence, overlaps
/// dropped), and queues the result in a FIFO. A track of one source reads its encoder
/// frames from its lane's FIFO; a mix (`AudioTrackEncoder` with several lanes) sums the
/// lanes' FIFOs. Not `Sendable`.
final class AudioLane {
    private let rate: Int
    /// The lane's sample format and layout: the FIFO holds samples in it.
    private let sampleFormat: AVSampleFormat
    private var layout = AVChannelLayout()
    let fifo: OpaquePointer
    private var resampler: Resampler?
    private var resamplerInput: AudioFormat?
    private var sync = AudioClockSync()
    /// Samples put into the FIFO so far (the lane's length once the resampler is drained).
    private(set) var produced: Int64 = 0
    /// Output samples a drop still has to remove.
    private var pendingDrop: Int64 = 0
    private var started = false
    private var lastReport: Int64 = 0
    /// The lane's index in its track's mix; nil for a track of one source.
    let mixLane: Int?
    private(set) var statistics = AudioSyncStatistics()
    /// Corrections made by the appends since `clearEvents()` (silence, drops, the periodic
    /// compensation state). Kept, not called back: nothing is allocated per buffer.
    private(set) var events: [AudioSyncEvent] = []
    /// The resampler's output, before the FIFO: grown when a buffer needs more, else reused.
    private let scratchFrame: Frame
    private var scratch: UnsafeMutablePointer<AVFrame> { scratchFrame.pointer }

    /// A lane converting to `sampleFormat` at `rate` Hz in `layout`, with room for `frameSize * 4` samples before it grows.
    init(rate: Int, sampleFormat: AVSampleFormat, layout: UnsafePointer<AVChannelLayout>, frameSize: Int, mixLane: Int?) throws(SwiftRecordError) {
        self.rate = rate
        self.sampleFormat = sampleFormat
        self.mixLane = mixLane
        scratchFrame = try Frame()
        try check(av_channel_layout_copy(&self.layout, layout), "av_channel_layout_copy")
        guard let fifo = av_audio_fifo_alloc(sampleFormat, layout.pointee.nb_channels, Int32(frameSize * 4)) else {
            av_channel_layout_uninit(&self.layout)
            throw SwiftRecordError(.ffmpeg, operation: "av_audio_fifo_alloc", message: "out of memory")
        }
        self.fifo = fifo
        events.reserveCapacity(8)
    }

    deinit {
        av_audio_fifo_free(fifo)
        av_channel_layout_uninit(&layout)
    }

    /// Samples waiting in the FIFO.
    var queued: Int { Int(av_audio_fifo_size(fifo)) }

    /// Forgets the events reported so far (keeping their storage).
    func clearEvents() { events.removeAll(keepingCapacity: true) }

    private func report(_ event: AudioSyncEvent) {
        var event = event
        event.mixSource = mixLane
        events.append(event)
    }

    /// Converts `buffer`, whose first sample is stamped `ticks` (1/rate units from the
    /// session's start), into the FIFO.
    func append(_ buffer: AudioSampleBuffer, ticks: Int64, followsGap: Bool) throws(SwiftRecordError) {
        try configureResampler(for: buffer.format)
        guard let swr = resampler?.context else { return }
        if !started {
            started = true
            // The track starts at the session's start: silence until the first sample. (A
            // mix may have given the lane silence already, while its source was slower to
            // start than the others: only the rest is added, or what goes past the first
            // sample dropped.)
            if ticks > produced { try writeSilence(Int(clamping: ticks - produced)) }
            if ticks < produced { pendingDrop += produced - ticks }
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

    /// Takes everything the resampler still holds into the FIFO.
    func drain() throws(SwiftRecordError) {
        if let swr = resampler?.context { try drain(swr) }
    }

    /// Puts `count` samples of silence into the FIFO.
    func writeSilence(_ count: Int) throws(SwiftRecordError) {
        guard count > 0 else { return }
        try prepareScratch(capacity: count)
        try check(av_samples_set_silence(scratch.pointee.extended_data, 0, Int32(count), layout.nb_channels, sampleFormat),
                  "av_samples_set_silence")
        try writeScratch(count)
    }

    /// Silence for `count` samples the lane missed while it lagged behind the rest of its
    /// mix, counted once its source has delivered (before, it is the track's leading silence).
    func fillLag(_ count: Int) throws(SwiftRecordError) {
        try writeSilence(count)
        if started { statistics.mixLagSilenceSamples += max(0, count) }
    }

    /// Moves `count` samples from the FIFO to the planes at `data`.
    func read(_ count: Int, into data: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(SwiftRecordError) {
        try check(av_audio_fifo_read(fifo, data, Int32(count)), "av_audio_fifo_read")
    }

    // MARK: - Conversion

    private func configureResampler(for format: AudioFormat) throws(SwiftRecordError) {
        if resamplerInput == format, resampler != nil { return }
        try format.validate("append")
        if let old = resampler {
            // A new input format: what the old resampler holds goes out first.
            try drain(old.context)
            resampler = nil
        }
        var inLayout = format.channelLayout.makeAVChannelLayout()
        defer { av_channel_layout_uninit(&inLayout) }
        // Always through the resampler, so compensation can start at any time without a re-init.
        resampler = try Resampler(output: (layout, sampleFormat, Int32(rate)),
                                  input: (inLayout, format.avSampleFormat, Int32(format.sampleRate)),
                                  alwaysResample: true, hint: "cannot convert \(format) to the encoder's \(rate) Hz")
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
        scratch.pointee.format = sampleFormat.rawValue
        try check(av_channel_layout_copy(&scratch.pointee.ch_layout, &layout), "av_channel_layout_copy")
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
}
