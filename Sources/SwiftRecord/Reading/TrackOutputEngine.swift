internal import CFFmpeg
import DequeModule

/// One track output's machinery while its reader reads: the packets the demuxer read for
/// its track and not yet handed out, and for a decoding output its decoder and converter
/// (libswscale through a `ScaleContext` into pooled `PixelBuffer`s, or an
/// `AudioResampler`). Lives in the reader's `ReadingSession`, used by the one read it is
/// lent to; not `Sendable`.
final class TrackOutputEngine {
    let stream: Int32
    let format: FormatDescription
    let settings: AssetReaderOutputSettings?
    private let path: String
    /// The range asked for, in the track's ticks (nil: unbounded that side).
    private let startTicks: Int64?
    private let endTicks: Int64?
    /// Packets read for this track, oldest first.
    var queue = Deque<PacketStorage>()
    /// No packet will be read for it any more (the file ended).
    var inputEnded = false
    /// Everything it will hand out has been handed out.
    private(set) var finished = false

    // Compressed samples.
    private var lastDecodeTicks: Int64?
    private var lastDurationTicks: Int64 = 0
    private var seenKeyFrame = false

    // Decoding.
    private var decoder: CodecContext?
    private var frame: Frame?
    private var flushSent = false
    private var scaler: ScaleContext?
    private var scalerSource: (width: Int32, height: Int32, format: Int32)?
    private var pool: PixelBufferPool?
    private var resampler: AudioResampler?
    /// The next decoded audio sample's index at the output's rate.
    private var nextSample: Int64?

    // One picture (an image generator's `PictureRequest`).
    private var request: PictureRequest?
    /// The last picture decoded at or before the requested time, not yet converted.
    private var held: Frame?
    private var heldTicks: Int64?

    /// Pictures a decoding output's pool keeps; beyond that (a consumer holding more) fresh
    /// buffers are made.
    static let poolSize = 8

    init(stream: Int32, format: FormatDescription, settings: AssetReaderOutputSettings?, range: TimeRange?,
         path: String) throws(SwiftRecordError) {
        self.stream = stream
        self.format = format
        self.settings = settings
        self.path = path
        if let range, range.isValid {
            startTicks = range.start > .zero ? format.ticks(range.start) : nil
            endTicks = range.duration.isNumeric ? format.ticks(range.end) : nil
        } else {
            startTicks = nil
            endTicks = nil
        }
        guard settings != nil else { return }
        guard let codec = avcodec_find_decoder(format.parameters.pointee.codec_id) else {
            throw SwiftRecordError(.unsupported, operation: "read \(path)",
                                   message: "this FFmpeg has no decoder for the \(format.codecName) track \(stream); read it with outputSettings nil (compressed samples)")
        }
        let owner = try CodecContext(codec: codec)
        let dec = owner.pointer
        try check(avcodec_parameters_to_context(dec, format.parameters), "avcodec_parameters_to_context")
        dec.pointee.pkt_timebase = format.timeBase
        dec.pointee.thread_count = 0
        try check(avcodec_open2(dec, codec, nil), "read \(path): open the \(format.codecName) decoder")
        frame = try Frame()
        decoder = owner
    }

    /// After the reader's session moved in the file (`ReadingSession.seek`): forgets the
    /// packets and pictures of the old place, and from now on hands out the one picture
    /// `request` asks for (nil: every picture, as before).
    func restart(for request: PictureRequest?) throws(SwiftRecordError) {
        queue.removeAll()
        inputEnded = false
        finished = false
        flushSent = false
        seenKeyFrame = false
        lastDecodeTicks = nil
        if let decoder { avcodec_flush_buffers(decoder.pointer) }
        held?.unref()
        heldTicks = nil
        if request != nil && held == nil { held = try Frame() }
        self.request = request
    }

    /// The next sample, or nil: finished (`finished`), or more packets are needed.
    func next() throws(SwiftRecordError) -> MediaSample? {
        if finished { return nil }
        guard let decoder, let frame = frame?.pointer else { return try nextCompressed() }
        let dec = decoder.pointer
        while true {
            let step = try codecStep(avcodec_receive_frame(dec, frame), "read \(path): decode the \(format.codecName) track \(stream)")
            switch step {
            case .ok:
                defer { av_frame_unref(frame) }
                if let sample = try convert(frame) { return sample }
                if finished { return nil }
            case .endOfStream:
                let rest = request != nil ? try heldPicture() : try drainResampler()
                finish()
                return rest
            case .again:
                if let storage = queue.popFirst() {
                    let sent = try codecStep(avcodec_send_packet(dec, storage.packet), "read \(path): decode the \(format.codecName) track \(stream)")
                    if sent == .again { queue.prepend(storage) }
                } else if inputEnded && !flushSent {
                    flushSent = true
                    _ = try codecStep(avcodec_send_packet(dec, nil), "read \(path): flush the \(format.codecName) decoder")
                } else if flushSent {
                    let rest = request != nil ? try heldPicture() : nil
                    finish()
                    return rest
                } else {
                    return nil
                }
            }
        }
    }

    private func finish() {
        finished = true
        queue.removeAll()
    }

    // MARK: - Compressed samples

    private func nextCompressed() throws(SwiftRecordError) -> MediaSample? {
        while let storage = queue.popFirst() {
            let p = storage.packet
            let nopts = sr_nopts_value()
            if lastDecodeTicks == nil && p.pointee.pts == nopts && p.pointee.dts == nopts
                && !TrackOutputEngine.stampLeadingPackets(storage, queue: queue, inputEnded: inputEnded) {
                queue.prepend(storage)
                return nil
            }
            // A demuxer leaves the first decode times of a stream with B-frames unknown
            // (Matroska stores presentation times only); a muxer needs them: the frames the
            // decoder holds back come before, one frame apart.
            if p.pointee.dts == nopts {
                let step = max(1, p.pointee.duration > 0 ? p.pointee.duration : lastDurationTicks)
                if let last = lastDecodeTicks {
                    p.pointee.dts = last + max(1, lastDurationTicks > 0 ? lastDurationTicks : step)
                } else if p.pointee.pts != nopts {
                    p.pointee.dts = p.pointee.pts - Int64(format.parameters.pointee.video_delay) * step
                }
                if p.pointee.pts != nopts && p.pointee.dts != nopts && p.pointee.dts > p.pointee.pts { p.pointee.dts = p.pointee.pts }
            }
            if p.pointee.dts != nopts, let last = lastDecodeTicks, p.pointee.dts <= last { p.pointee.dts = last + 1 }
            if p.pointee.dts != nopts { lastDecodeTicks = p.pointee.dts }
            if p.pointee.duration > 0 { lastDurationTicks = p.pointee.duration }
            // Every packet decoded before the end is kept (a picture shown after the end may
            // be one shown before it refers to); past it, all come later.
            if let end = endTicks, p.pointee.dts != nopts, p.pointee.dts >= end {
                finish()
                return nil
            }
            // After a seek into the file, decoding can only start at a key frame.
            if !seenKeyFrame {
                guard (p.pointee.flags & sr_pkt_flag_key()) != 0 || format.mediaType != .video else { continue }
                seenKeyFrame = true
            }
            return .compressed(CompressedSampleBuffer(storage: storage, formatDescription: format))
        }
        if inputEnded { finish() }
        return nil
    }

    // MARK: - Decoded samples

    /// A decoded frame as the output's sample, or nil when it falls outside the range.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(SwiftRecordError) -> MediaSample? {
        switch settings {
        case .video(let pixelFormat, let size)?:
            if let request { return try picture(frame, request, pixelFormat) }
            return try picture(frame, pixelFormat, size)
        case .audio(let output)?: return try sound(frame, output)
        case nil: return nil
        }
    }

    private func frameTicks(_ frame: UnsafeMutablePointer<AVFrame>) -> Int64? {
        let t = frame.pointee.best_effort_timestamp
        if t != sr_nopts_value() { return t }
        return frame.pointee.pts != sr_nopts_value() ? frame.pointee.pts : nil
    }

    private func picture(_ frame: UnsafeMutablePointer<AVFrame>, _ pixelFormat: PixelFormat, _ size: VideoSize?) throws(SwiftRecordError) -> MediaSample? {
        guard let ticks = frameTicks(frame) else { return nil }
        if let start = startTicks, ticks < start { return nil }
        if let end = endTicks, ticks >= end {
            finish()
            return nil
        }
        return try converted(frame, ticks, pixelFormat, size)
    }

    /// `frame` converted (and scaled to `size`) into a pooled pixel buffer.
    private func converted(_ frame: UnsafeMutablePointer<AVFrame>, _ ticks: Int64, _ pixelFormat: PixelFormat,
                           _ size: VideoSize?) throws(SwiftRecordError) -> MediaSample? {
        let w = frame.pointee.width, h = frame.pointee.height, f = frame.pointee.format
        let target = size ?? VideoSize(width: Int(w), height: Int(h))
        if pool.map({ $0.width != target.width || $0.height != target.height }) ?? false {
            // Another size asked for (an image generator's maximumSize changed).
            pool = nil
            scalerSource = nil
        }
        if scalerSource.map({ $0.width != w || $0.height != h || $0.format != f }) ?? true {
            let scaling = Int(w) != target.width || Int(h) != target.height
            scaler = try ScaleContext(from: VideoSize(width: Int(w), height: Int(h)), AVPixelFormat(rawValue: f),
                                      to: target, pixelFormat.av, flags: PixelConverter.flags(scaling: scaling),
                                      describe: "the \(format.codecName) track's pictures to \(target) \(pixelFormat)")
            scaler?.useColors(of: frame)
            scalerSource = (w, h, f)
        }
        if pool == nil {
            pool = try PixelBufferPool(width: target.width, height: target.height, pixelFormat: pixelFormat,
                                       maximumBufferCount: TrackOutputEngine.poolSize)
        }
        let buffer: PixelBuffer
        if let pooled = pool?.makePixelBufferIfAvailable() {
            buffer = pooled
        } else {
            buffer = try PixelBuffer(width: target.width, height: target.height, pixelFormat: pixelFormat)
        }
        guard let scaler else { return nil }
        try buffer.withWritableFrame { (dst) throws(SwiftRecordError) in
            try scaler.scale(frame, height: Int(h), into: dst, operation: "read \(path): sws_scale")
        }
        return .video(SampleBuffer(pixelBuffer: buffer, presentationTimeStamp: format.time(ofTicks: ticks)))
    }

    /// The picture `request` asks for, once it is known: with a tolerance, the first picture
    /// inside it; otherwise the one shown at the time (the last at or before it, held until
    /// a later one shows the interval ended). Only that one is converted.
    private func picture(_ frame: UnsafeMutablePointer<AVFrame>, _ request: PictureRequest,
                         _ pixelFormat: PixelFormat) throws(SwiftRecordError) -> MediaSample? {
        guard let ticks = frameTicks(frame), let held = held?.pointer else { return nil }
        let chosen: MediaSample?
        if request.isTolerant, ticks >= request.earliest, ticks <= request.latest {
            chosen = try converted(frame, ticks, pixelFormat, request.size)
        } else if ticks <= request.ticks {
            av_frame_unref(held)
            av_frame_move_ref(held, frame)
            heldTicks = ticks
            return nil
        } else if heldTicks == nil {
            // The time lies before the first picture decoded: that picture is shown at it.
            chosen = try converted(frame, ticks, pixelFormat, request.size)
        } else {
            chosen = try heldPicture()
        }
        // The last picture decoded is held, for a later time to be found from here on
        // (`proceed(to:)`) without a seek.
        av_frame_unref(held)
        av_frame_move_ref(held, frame)
        heldTicks = ticks
        finished = true
        return chosen
    }

    /// Whether the one-picture request for `ticks` can be found by decoding on from here:
    /// the decoder has not passed it nor reached the file's end.
    func canProceed(to ticks: Int64) -> Bool {
        request != nil && !flushSent && !inputEnded && heldTicks.map { ticks >= $0 } ?? false
    }

    /// The last picture decoded (the one held), in the track's ticks.
    var lastPictureTicks: Int64? { heldTicks }

    /// Hands out the one picture of `request` decoding on from where the last request
    /// stopped (`canProceed(to:)` is true): the packets queued and the held picture stay.
    func proceed(to request: PictureRequest) {
        finished = false
        self.request = request
    }

    /// The held picture, converted, at the end of the track (the request's time lies in the
    /// last picture's interval).
    private func heldPicture() throws(SwiftRecordError) -> MediaSample? {
        guard let request, let held = held?.pointer, let ticks = heldTicks, case .video(let pixelFormat, _)? = settings else { return nil }
        heldTicks = nil
        defer { av_frame_unref(held) }
        return try converted(held, ticks, pixelFormat, request.size)
    }

    private func sound(_ frame: UnsafeMutablePointer<AVFrame>, _ output: AudioFormat) throws(SwiftRecordError) -> MediaSample? {
        if resampler == nil {
            resampler = try AudioResampler(from: frame, to: output, operation: "read \(path)")
        }
        guard let resampler else { return nil }
        if nextSample == nil {
            let first = frameTicks(frame).map { format.time(ofTicks: $0) } ?? .zero
            nextSample = first.isNumeric ? first.convertScale(Int32(clamping: output.sampleRate)).value : 0
        }
        let (planes, count) = try resampler.convert(frame)
        return try cut(planes, count, output)
    }

    /// What the resampler still holds, at the end.
    private func drainResampler() throws(SwiftRecordError) -> MediaSample? {
        guard let resampler, case .audio(let output)? = settings else { return nil }
        let (planes, count) = try resampler.convert(nil)
        return try cut(planes, count, output)
    }

    /// Stamps `count` converted samples and cuts them to the range.
    private func cut(_ planes: [[UInt8]], _ count: Int, _ output: AudioFormat) throws(SwiftRecordError) -> MediaSample? {
        guard count > 0, let first = nextSample else { return nil }
        nextSample = first + Int64(count)
        let rate = Int32(clamping: output.sampleRate)
        var keep = 0..<count
        if let start = startTicks {
            let s = format.time(ofTicks: start).convertScale(rate, rounding: .up).value
            keep = max(0, min(count, Int(s - first)))..<count
        }
        if let end = endTicks {
            let e = format.time(ofTicks: end).convertScale(rate, rounding: .up).value
            if first + Int64(count) >= e { finished = true }
            keep = keep.lowerBound..<max(keep.lowerBound, min(count, Int(e - first)))
        }
        guard !keep.isEmpty else { return nil }
        let buffer = AudioSampleBuffer(format: output, frameCount: count, presentationTimeStamp: MediaTime(value: first, timescale: rate), planes: planes)
        return .audio(keep.count == count ? buffer : buffer.slice(keep))
    }
}
