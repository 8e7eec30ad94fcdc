import Foundation

/// One track of a media file opened by an `AssetReader`: what it carries and how its times
/// count.
///
/// The counterpart of `AVAssetTrack` on Apple platforms.
public struct AssetReaderTrack: Sendable, CustomStringConvertible {
    /// The track's number in the file: libavformat's stream index (`trackID`).
    public let trackID: Int
    /// Pictures or sound (`mediaType`).
    public let mediaType: MediaType
    /// The codec and its parameters (`formatDescriptions`); a pass-through writer input
    /// takes it as its `sourceFormatHint`.
    public let formatDescription: FormatDescription
    /// How long the track lasts, when the file says (`timeRange.duration`).
    public let duration: MediaTime?
    /// Pictures per second the file declares (`nominalFrameRate`); nil for sound or when unknown.
    public let nominalFrameRate: Rational?
    /// How the pictures are to be shown (`preferredTransform`): the quarter turns and
    /// mirrors of the track's display matrix (MP4/MOV); identity when it has none or
    /// another one.
    public internal(set) var preferredTransform = VideoTransform.identity
    /// The track's language as the file tags it ("eng", "fre"; `languageCode`), nil when it does not.
    public internal(set) var languageCode: String?
    /// The track's title as the file tags it ("English (SDH)"), nil when it has none.
    public internal(set) var title: String?
    /// The file the track is in (`asset`): what a composition track's insert reads.
    public internal(set) var assetURL: URL?

    /// FFmpeg's name of the codec ("h264", "aac", …).
    public var codecName: String { formatDescription.codecName }
    /// Picture size (`naturalSize`); zero for sound.
    public var naturalSize: VideoSize { formatDescription.dimensions }
    /// Samples per second; 0 for video.
    public var sampleRate: Int { formatDescription.sampleRate }
    /// Channels; 0 for video.
    public var channelCount: Int { formatDescription.channelCount }
    /// Seconds per tick of the track's times (`naturalTimeScale` is its reciprocal).
    public var timeScale: Rational? { formatDescription.timeScale }

    public var description: String {
        let t = preferredTransform
        let turn = t.isIdentity ? "" : ", shown " + (t.isMirrored ? "mirrored and " : "") + "turned \(t.rotationDegrees)° clockwise"
        if mediaType == .subtitle {
            let tags = [languageCode, title.map { "\"\($0)\"" }].compactMap { $0 }
            return "track \(trackID): subtitle \(formatDescription)" + (tags.isEmpty ? "" : " (\(tags.joined(separator: ", ")))")
        }
        return "track \(trackID): \(mediaType) \(formatDescription)" + (duration.map { String(format: ", %.3f s", $0.seconds) } ?? "") + turn
    }
}

/// What a track output hands out when it does not pass compressed samples through
/// (`outputSettings`): decoded pictures in a pixel format and size, or decoded sound in a
/// sample format, rate and layout.
public enum AssetReaderOutputSettings: Sendable, Hashable {
    /// Decoded pictures as `PixelBuffer`s in `pixelFormat`, scaled to `size` (nil: the
    /// track's own) with libswscale (`kCVPixelBufferPixelFormatTypeKey`,
    /// `kCVPixelBufferWidthKey`, `kCVPixelBufferHeightKey`).
    case video(pixelFormat: PixelFormat, size: VideoSize? = nil)
    /// Decoded PCM in `format` (sample type, interleaving, rate, channels), converted with
    /// libswresample (`AVFormatIDKey: kAudioFormatLinearPCM` with `AVLinearPCM*` keys).
    case audio(AudioFormat)
}
