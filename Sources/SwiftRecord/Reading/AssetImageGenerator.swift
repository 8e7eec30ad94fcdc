internal import CFFmpeg
import Foundation

/// Pictures of a media file's video track at given times: thumbnails, posters, contact
/// sheets. Frame-accurate by default: the picture shown at the time asked for (the one
/// whose interval contains it), found by seeking to the key frame before and decoding
/// forward; with a tolerance, the first picture decoded inside it, which after a seek is
/// often the key frame itself (cheaper).
///
/// ```swift
/// let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: "recording.mkv"))
/// generator.maximumSize = VideoSize(width: 320, height: 320)
/// generator.appliesPreferredTrackTransform = true
/// let (image, actualTime) = try generator.image(at: MediaTime(seconds: 5))
/// let png = try generator.encodedImage(at: MediaTime(seconds: 5), format: .png)
/// ```
///
/// Pictures are decoded by the same machinery as an `AssetReaderTrackOutput`'s (one
/// decoder and one libswscale context, kept from one call to the next), and come as RGB
/// (`rgb24`) pixel buffers. Times count from the file's start (``AssetReader/startTime``,
/// its earliest time stamp), as `ffmpeg -ss` and players count them: 0 is the first
/// picture of a capture whose time stamps start at 1.4 s. Calls are serialised; a
/// generator may be shared between threads.
///
/// The counterpart of `AVAssetImageGenerator` on Apple platforms (which makes `CGImage`s).
public final class AssetImageGenerator: Sendable {
    /// The file read.
    public let url: URL
    /// The video track pictures come from (the file's first).
    public let track: AssetReaderTrack
    /// How long the file lasts, when it says (the latest time a picture can be asked for).
    public let duration: MediaTime?
    /// Where the file's timeline starts (``AssetReader/startTime``): time 0 of `image(at:)`.
    public let startTime: MediaTime
    /// Where the track's pictures end (from `startTime`: the last picture's time and one
    /// frame), once a call of `image(at:)` has decoded to the end of the track; nil before.
    /// A time after it has no picture: `image(at:)` throws.
    public var lastPictureEnd: MediaTime? { lastPictureEndTime.withLock { $0 } }
    private let lastPictureEndTime = Locked<MediaTime?>(nil)
    /// The file's length where its index says where the last picture ends (MP4, MOV).
    private let indexedLength: MediaTime?
    /// How long a picture is shown: one frame of the track's rate (zero when it has none).
    private var frameLength: MediaTime {
        guard let rate = track.nominalFrameRate, rate.numerator > 0 else { return .zero }
        return MediaTime(value: Int64(rate.denominator), timescale: rate.numerator)
    }

    private struct Settings {
        var toleranceBefore = MediaTime.zero
        var toleranceAfter = MediaTime.zero
        var maximumSize = VideoSize(width: 0, height: 0)
        var appliesPreferredTrackTransform = false
    }
    private let settings = Locked(Settings())
    /// The file open for reading: the demuxer and the video track's decoding engine.
    private let session: Locked<ReadingSession>
    private let orientation: PictureOrientation

    /// Opens the file at `asset` and picks its first video track. Throws, naming the file,
    /// when it cannot be opened, is no media file, or has no video track.
    public convenience init(asset: URL) throws(SwiftRecordError) {
        try self.init(reader: AssetReader(url: asset))
    }

    /// Pictures of the file `asset` reads (opened again: the reader itself is left as it is).
    public convenience init(asset: AssetReader) throws(SwiftRecordError) {
        try self.init(asset: asset.url)
    }

    private init(reader: AssetReader) throws(SwiftRecordError) {
        url = reader.url
        guard let video = reader.tracks.first(where: { $0.mediaType == .video }) else {
            let kinds = reader.tracks.map { "\($0.mediaType) (\($0.codecName))" }.joined(separator: ", ")
            throw SwiftRecordError(.invalidData, operation: "open \(reader.url.path)",
                                   message: "has no video track to take pictures from (it holds \(kinds))")
        }
        guard let demuxer = reader.takeDemuxer(), let stream = demuxer.stream(video.trackID) else {
            throw SwiftRecordError(.invalidState, operation: "open \(reader.url.path)", message: "the file is no longer open")
        }
        track = video
        duration = video.duration.map { d in reader.duration.map { max($0, d) } ?? d } ?? reader.duration
        startTime = reader.startTime
        // MP4 and MOV index every sample with its duration, so their length is where the
        // last picture really ends (a content-rate recording stretches its last picture to
        // the session's end); other containers can declare a length their packets do not
        // reach (a Matroska file cut short keeps its header's Duration).
        indexedLength = reader.containerName.hasPrefix("mov,mp4") ? duration : nil
        orientation = PictureOrientation(stream: stream)
        // Other streams are not read: their packets are dropped by the demuxer.
        for index in 0..<demuxer.streamCount where index != video.trackID {
            demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL
        }
        let engine = try TrackOutputEngine(stream: Int32(video.trackID), format: video.formatDescription,
                                           settings: .video(pixelFormat: .rgb24), range: nil, path: reader.url.path)
        session = Locked(try ReadingSession(demuxer: demuxer, engines: [engine], range: nil, path: reader.url.path))
    }

    /// How much earlier than the time asked for a picture may be (`requestedTimeToleranceBefore`).
    /// Zero by default: the picture shown at that time.
    public var requestedTimeToleranceBefore: MediaTime {
        get { settings[\.toleranceBefore] }
        set { settings.withLock { $0.toleranceBefore = newValue.isNumeric && newValue > .zero ? newValue : .zero } }
    }

    /// How much later than the time asked for a picture may be (`requestedTimeToleranceAfter`).
    /// Zero by default.
    public var requestedTimeToleranceAfter: MediaTime {
        get { settings[\.toleranceAfter] }
        set { settings.withLock { $0.toleranceAfter = newValue.isNumeric && newValue > .zero ? newValue : .zero } }
    }

    /// The largest picture wanted (`maximumSize`): pictures larger are scaled down
    /// (libswscale, bilinear), their aspect kept, to fit inside it; never scaled up. A side
    /// of 0 does not limit; the default, 0×0, keeps the track's size. Applies to the picture
    /// as turned by `appliesPreferredTrackTransform`.
    public var maximumSize: VideoSize {
        get { settings[\.maximumSize] }
        set { settings.withLock { $0.maximumSize = newValue } }
    }

    /// Whether pictures are turned as the track's display matrix says (quarter turns and
    /// mirrors, as a player shows them; `appliesPreferredTrackTransform`). False by default,
    /// as on Apple platforms.
    public var appliesPreferredTrackTransform: Bool {
        get { settings[\.appliesPreferredTrackTransform] }
        set { settings.withLock { $0.appliesPreferredTrackTransform = newValue } }
    }

    /// The size pictures come in with the current settings.
    public var imageSize: VideoSize {
        let s = settings.withLock { $0 }
        return outputSize(s)
    }

    private func outputSize(_ s: Settings) -> VideoSize {
        let shown = s.appliesPreferredTrackTransform ? orientation.apply(to: track.naturalSize) : track.naturalSize
        return AssetImageGenerator.fit(shown, in: s.maximumSize)
    }

    /// `size` scaled down, aspect kept, to fit in `limit` (a side of 0: no limit); at least 1×1.
    static func fit(_ size: VideoSize, in limit: VideoSize) -> VideoSize {
        guard size.width > 0, size.height > 0 else { return size }
        var scale = 1.0
        if limit.width > 0 { scale = min(scale, Double(limit.width) / Double(size.width)) }
        if limit.height > 0 { scale = min(scale, Double(limit.height) / Double(size.height)) }
        guard scale < 1 else { return size }
        return VideoSize(width: max(1, Int((Double(size.width) * scale).rounded())),
                         height: max(1, Int((Double(size.height) * scale).rounded())))
    }

    /// The picture at `time`, and the time it is stamped with (`image(at:)`): frame-accurate
    /// unless a tolerance is set. Throws for a time before zero or after the file's end,
    /// after its last picture (`lastPictureEnd`: a file cut short), and when the file
    /// cannot be read there.
    public func image(at time: MediaTime) throws(SwiftRecordError) -> (image: PixelBuffer, actualTime: MediaTime) {
        let path = url.path
        guard time.isNumeric, time >= .zero else {
            throw SwiftRecordError(.invalidArgument, operation: "image(at:)", message: "\(time) is not a time in \(path); expected 0 or later")
        }
        if let duration, time > duration {
            throw SwiftRecordError(.invalidArgument, operation: "image(at:)",
                                   message: String(format: "%@ s is past the end of %@ (%.3f s long)", time.secondsText, path, duration.seconds))
        }
        let s = settings.withLock { $0 }
        let shown = outputSize(s)
        let turn = s.appliesPreferredTrackTransform ? orientation : .identity
        // Scaled before turning: the decoded picture's sides are the shown one's, swapped back.
        let decoded = turn.swapsSides ? VideoSize(width: shown.height, height: shown.width) : shown
        let format = track.formatDescription
        let fileTime = time + startTime
        guard let ticks = format.ticks(fileTime), let earliest = format.ticks(fileTime - s.toleranceBefore),
              let latest = format.ticks(fileTime + s.toleranceAfter) else {
            throw SwiftRecordError(.invalidArgument, operation: "image(at:)", message: "\(time) is out of range for \(path)")
        }
        let request = PictureRequest(ticks: ticks, earliest: earliest, latest: latest,
                                     size: decoded == track.naturalSize ? nil : decoded)
        let (sample, atEnd) = try session.withLock { (session) throws(SwiftRecordError) -> (SampleBuffer?, Bool) in
            try session.moveToPicture(at: fileTime, request: request)
            if case .video(let picture)? = try session.next(0) { return (picture, session.engines[0].finished) }
            return (nil, session.engines[0].finished)
        }
        guard let sample else {
            throw SwiftRecordError(.invalidData, operation: "image(at:)",
                                   message: String(format: "no picture could be decoded at %.3f s in %@", time.seconds, path))
        }
        // The track's last picture, handed out because decoding reached its end, is shown for
        // one frame: a later time has no picture (a file cut short, or video that stops
        // before the sound), and the last one is not passed off as its picture.
        if atEnd {
            let pictureEnd = sample.presentationTimeStamp - startTime + frameLength
            let end = indexedLength.map { max($0, pictureEnd) } ?? pictureEnd
            lastPictureEndTime.withLock { $0 = end }
            if time - s.toleranceBefore > end {
                throw SwiftRecordError(.invalidData, operation: "image(at:)", message: String(
                    format: "no picture at %.3f s of %@: its pictures end at %.3f s%@", time.seconds, path, end.seconds,
                    duration.map { String(format: ", before the %.3f s it declares (cut short or damaged, or its video stops before its sound)", $0.seconds) } ?? ""))
            }
        }
        return (try turn.apply(to: sample.pixelBuffer), sample.presentationTimeStamp - startTime)
    }

    /// The picture at `time` (`copyCGImage(at:actualTime:)`); its time is stored in
    /// `actualTime` when given.
    public func copyImage(at time: MediaTime, actualTime: UnsafeMutablePointer<MediaTime>? = nil) throws(SwiftRecordError) -> PixelBuffer {
        let (image, actual) = try image(at: time)
        actualTime?.pointee = actual
        return image
    }

    /// The picture at `time` as the bytes of a PNG or JPEG file (libavcodec's png and mjpeg
    /// encoders).
    public func encodedImage(at time: MediaTime, format: ImageFileFormat) throws(SwiftRecordError) -> Data {
        try AssetImageGenerator.encode(try image(at: time).image, format: format)
    }

    /// `image` (any pixel format) as the bytes of a PNG or JPEG file.
    public static func encode(_ image: PixelBuffer, format: ImageFileFormat) throws(SwiftRecordError) -> Data {
        try ImageEncoder(format: format, size: VideoSize(width: image.width, height: image.height)).encode(image)
    }
}
