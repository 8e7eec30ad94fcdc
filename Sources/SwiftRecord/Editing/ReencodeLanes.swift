import Foundation

/// One track of a re-encoded export, read stretch by stretch and put on the output's
/// timeline: each stretch starts where the one before ends (the composition's times, so
/// pictures and sound stay in step at every join), an empty stretch is black pictures or
/// silence. Used by the export's thread only.
class ReencodeLane {
    let segments: [CompositionSegment]
    let mediaType: MediaType
    private var index = -1
    /// Where the current stretch starts in the output.
    private(set) var offset = MediaTime.zero
    private var reader: AssetReader?
    var output: AssetReaderTrackOutput?
    /// Samples ready to hand out, in time order.
    var queue: [MediaSample] = []

    init(_ track: CompositionTrackContent) {
        segments = track.segments
        mediaType = track.mediaType
    }

    var segment: CompositionSegment? { segments.indices.contains(index) ? segments[index] : nil }

    /// The next sample, nil at the end of the last stretch.
    func next() throws(SwiftRecordError) -> MediaSample? {
        while queue.isEmpty {
            if index >= segments.count { return nil }
            if try !fill() { try advance() }
        }
        return queue.removeFirst()
    }

    /// The time of the sample `next()` will give, reading it if needed.
    func peekTime() throws(SwiftRecordError) -> MediaTime? {
        guard let sample = try next() else { return nil }
        queue.insert(sample, at: 0)
        return sample.presentationTimeStamp
    }

    /// Puts what the current stretch gives next into `queue`; false when it has no more.
    func fill() throws(SwiftRecordError) -> Bool { false }

    /// The output settings the lane reads `track` with.
    func readSettings(_ track: AssetReaderTrack) throws(SwiftRecordError) -> AssetReaderOutputSettings { .video(pixelFormat: .yuv420p) }

    /// Called when a stretch starts (`segment` set, `output` open for a file's).
    func begin() throws(SwiftRecordError) {}

    private func advance() throws(SwiftRecordError) {
        if let s = segment { offset = offset + s.range.duration }
        reader?.cancelReading()
        reader = nil
        output = nil
        index += 1
        guard let s = segment else { return }
        if let path = s.path {
            let r = try AssetReader(url: URL(fileURLWithPath: path))
            guard let track = r.tracks.first(where: { $0.trackID == s.trackID && $0.mediaType == mediaType })
                    ?? r.tracks.first(where: { $0.mediaType == mediaType }) else {
                throw SwiftRecordError(.invalidData, operation: "export \(path)", message: "has no \(mediaType) track to read")
            }
            r.timeRange = readRange(s.range)
            let o = AssetReaderTrackOutput(track: track, outputSettings: try readSettings(track))
            try r.add(o)
            try r.startReading()
            reader = r
            output = o
        }
        try begin()
    }

    /// The part of the file read for a stretch of `range`.
    func readRange(_ range: TimeRange) -> TimeRange { range }

    func cancel() { reader?.cancelReading() }
}

/// Pictures: each stretch's decoded at the output's size (one of another aspect fitted
/// inside it, centred on black); the picture shown at a stretch's start (decoded before it)
/// is put at its start; an empty stretch is black pictures at the output's frame rate.
final class VideoReencodeLane: ReencodeLane {
    let size: VideoSize
    let frameDuration: MediaTime
    private let black: PixelBuffer
    private var nextBlack = MediaTime.zero
    /// The last picture before the stretch's start, shown at its start.
    private var carried: SampleBuffer?
    private var started = false
    /// For a stretch of another aspect: its pictures placed on black, and buffers for them.
    private var letterbox: PictureOverlay?
    private let pool: PixelBufferPool

    init(_ track: CompositionTrackContent, size: VideoSize, frameRate: Rational) throws(SwiftRecordError) {
        self.size = size
        frameDuration = MediaTime(value: Int64(frameRate.denominator), timescale: frameRate.numerator)
        black = try PixelBuffer.black(from: PixelBufferPool(width: size.width, height: size.height, pixelFormat: .yuv420p, maximumBufferCount: 1))
        pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: .yuv420p, maximumBufferCount: WriterJob.pictureQueueDepth + 4)
        super.init(track)
    }

    /// The output's size, or for a track of another aspect the largest even size of its
    /// aspect inside it (placed in the middle, on black).
    override func readSettings(_ track: AssetReaderTrack) throws(SwiftRecordError) -> AssetReaderOutputSettings {
        letterbox = nil
        let source = track.naturalSize
        guard source.width > 0, source.height > 0 else { return .video(pixelFormat: .yuv420p, size: size) }
        let scale = min(Double(size.width) / Double(source.width), Double(size.height) / Double(source.height))
        let w = min(size.width, max(2, Int(Double(source.width) * scale / 2) * 2))
        let h = min(size.height, max(2, Int(Double(source.height) * scale / 2) * 2))
        // Within a rounding of a pixel or two, the aspect is the same: scaled to fill.
        guard size.width - w > 2 || size.height - h > 2 else { return .video(pixelFormat: .yuv420p, size: size) }
        let rectangle = PixelRegion(x: ((size.width - w) / 4) * 2, y: ((size.height - h) / 4) * 2, width: w, height: h)
        letterbox = try PictureOverlay(rectangle: rectangle, baseSize: size, baseFormat: .yuv420p)
        return .video(pixelFormat: .yuv420p, size: VideoSize(width: w, height: h))
    }

    override func readRange(_ range: TimeRange) -> TimeRange {
        guard range.start > .zero else { return range }
        // A frame and a bit earlier: the picture on screen at the start is decoded before it.
        let early = max(.zero, range.start - frameDuration - frameDuration)
        return TimeRange(start: early, end: range.end)
    }

    override func begin() throws(SwiftRecordError) {
        if output == nil { letterbox = nil }
        carried = nil
        started = false
        nextBlack = .zero
    }

    override func fill() throws(SwiftRecordError) -> Bool {
        guard let s = segment else { return false }
        guard let output else {
            guard nextBlack < s.range.duration else { return false }
            queue.append(.video(SampleBuffer(pixelBuffer: black, presentationTimeStamp: offset + nextBlack)))
            nextBlack = nextBlack + frameDuration
            return true
        }
        while true {
            guard let sample = try output.copyNextSampleBuffer() else {
                if let c = carried { try put(c, at: .zero) }
                carried = nil
                return !queue.isEmpty
            }
            guard case .video(let picture) = sample else { continue }
            let t = picture.presentationTimeStamp - s.range.start
            if !started {
                if t < .zero {
                    carried = picture
                    continue
                }
                if t > .zero, let c = carried { try put(c, at: .zero) }
                carried = nil
            }
            try put(picture, at: t)
            return true
        }
    }

    private func put(_ picture: SampleBuffer, at t: MediaTime) throws(SwiftRecordError) {
        started = true
        var pixels = picture.pixelBuffer
        if let letterbox {
            let out: PixelBuffer
            if let pooled = pool.makePixelBufferIfAvailable() {
                out = pooled
            } else {
                out = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .yuv420p)
            }
            try letterbox.compose(black, picture.pixelBuffer, into: out)
            pixels = out
        }
        queue.append(.video(SampleBuffer(pixelBuffer: pixels, presentationTimeStamp: offset + max(.zero, t))))
    }
}

/// Sound: each stretch's decoded to the output's format and laid sample for sample from
/// its start, a gap in it filled with silence and an overlap dropped, and padded with
/// silence (or cut) to the stretch's exact end; an empty stretch is silence.
final class AudioReencodeLane: ReencodeLane {
    let format: AudioFormat
    /// Samples laid so far, and where the current stretch ends, in samples from 0.
    private var position: Int64 = 0
    private var stretchEnd: Int64 = 0

    init(_ track: CompositionTrackContent, format: AudioFormat) {
        self.format = format
        super.init(track)
    }

    override func readSettings(_ track: AssetReaderTrack) -> AssetReaderOutputSettings { .audio(format) }

    private func samples(_ t: MediaTime) -> Int64 { t.convertScale(Int32(clamping: format.sampleRate)).value }

    override func begin() throws(SwiftRecordError) {
        if let s = segment { stretchEnd = samples(offset + s.range.duration) }
    }

    override func fill() throws(SwiftRecordError) -> Bool {
        guard let s = segment else { return false }
        if let output, let sample = try output.copyNextSampleBuffer() {
            guard case .audio(let buffer) = sample else { return true }
            let at = samples(offset + (buffer.presentationTimeStamp - s.range.start))
            if at > position { try silence(min(at, stretchEnd) - position) }
            let skip = Int(max(0, position - at))
            let room = Int(max(0, stretchEnd - position))
            let kept = buffer.slice(skip..<min(buffer.frameCount, skip + room))
            if kept.frameCount > 0 {
                queue.append(.audio(kept.withPresentationTimeStamp(time(position))))
                position += Int64(kept.frameCount)
            }
            return true
        }
        guard position < stretchEnd else { return false }
        try silence(stretchEnd - position)
        return true
    }

    private func time(_ samples: Int64) -> MediaTime { MediaTime(value: samples, timescale: Int32(clamping: format.sampleRate)) }

    /// `count` samples of silence, in buffers of at most 4096 (a long gap costs no more memory).
    private func silence(_ count: Int64) throws(SwiftRecordError) {
        var left = count
        while left > 0 {
            let n = min(left, 4096)
            let bytes = [UInt8](repeating: 0, count: Int(n) * format.bytesPerFrameInPlane)
            let buffer = try AudioSampleBuffer(format: format, presentationTimeStamp: time(position),
                                               planes: Array(repeating: bytes, count: format.planeCount))
            queue.append(.audio(buffer))
            position += n
            left -= n
        }
    }
}
