import Foundation

// Apple's names for video output settings, so settings pasted from AVFoundation code
// compile and mean the same here. The values are the strings Apple's constants hold;
// the dictionary reader also takes the constants' names themselves.

/// The codec (`AVVideoCodecType.h264`, `.hevc`, or a string such as "avc1").
public let AVVideoCodecKey = "AVVideoCodecKey"
/// Width in pixels.
public let AVVideoWidthKey = "AVVideoWidthKey"
/// Height in pixels.
public let AVVideoHeightKey = "AVVideoHeightKey"
/// A dictionary of the compression keys below.
public let AVVideoCompressionPropertiesKey = "AVVideoCompressionPropertiesKey"
/// Average bit rate in bits per second.
public let AVVideoAverageBitRateKey = "AverageBitRate"
/// Largest distance between key frames, in frames.
public let AVVideoMaxKeyFrameIntervalKey = "MaxKeyFrameInterval"
/// Largest distance between key frames, in seconds.
public let AVVideoMaxKeyFrameIntervalDurationKey = "MaxKeyFrameIntervalDuration"
/// Profile and level: one of the `AVVideoProfileLevel…` strings, an x264/x265 profile name, or a `VideoProfileLevel`.
public let AVVideoProfileLevelKey = "ProfileLevel"
/// The frame rate the source delivers (a hint; see `VideoSettings.expectedSourceFrameRate`).
public let AVVideoExpectedSourceFrameRateKey = "ExpectedFrameRate"
/// Whether B-frames (frames shown before frames they depend on) may be used.
public let AVVideoAllowFrameReorderingKey = "AllowFrameReordering"

/// H.264 Baseline, the level chosen by the encoder.
public let AVVideoProfileLevelH264BaselineAutoLevel = "H264_Baseline_AutoLevel"
/// H.264 Baseline, level 3.0.
public let AVVideoProfileLevelH264Baseline30 = "H264_Baseline_3_0"
/// H.264 Baseline, level 3.1.
public let AVVideoProfileLevelH264Baseline31 = "H264_Baseline_3_1"
/// H.264 Baseline, level 4.1.
public let AVVideoProfileLevelH264Baseline41 = "H264_Baseline_4_1"
/// H.264 Main, the level chosen by the encoder.
public let AVVideoProfileLevelH264MainAutoLevel = "H264_Main_AutoLevel"
/// H.264 Main, level 3.0.
public let AVVideoProfileLevelH264Main30 = "H264_Main_3_0"
/// H.264 Main, level 3.1.
public let AVVideoProfileLevelH264Main31 = "H264_Main_3_1"
/// H.264 Main, level 3.2.
public let AVVideoProfileLevelH264Main32 = "H264_Main_3_2"
/// H.264 Main, level 4.1.
public let AVVideoProfileLevelH264Main41 = "H264_Main_4_1"
/// H.264 High, the level chosen by the encoder: `.h264(.high, level: .auto)`.
public let AVVideoProfileLevelH264HighAutoLevel = "H264_High_AutoLevel"
/// H.264 High, level 4.0.
public let AVVideoProfileLevelH264High40 = "H264_High_4_0"
/// H.264 High, level 4.1.
public let AVVideoProfileLevelH264High41 = "H264_High_4_1"

/// `AVVideoCodecType.h264`, `.hevc` as in Apple code.
public typealias AVVideoCodecType = VideoCodec

extension VideoSettings {
    /// Settings from an output-settings dictionary with Apple's keys, as pasted from
    /// AVFoundation code:
    ///
    /// ```swift
    /// let settings = try VideoSettings(outputSettings: [
    ///     AVVideoCodecKey: AVVideoCodecType.h264,
    ///     AVVideoWidthKey: 1280, AVVideoHeightKey: 720,
    ///     AVVideoCompressionPropertiesKey: [
    ///         AVVideoAverageBitRateKey: 2_000_000,
    ///         AVVideoMaxKeyFrameIntervalKey: 60,
    ///         AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
    ///     ],
    /// ])
    /// ```
    ///
    /// Keys: `AVVideoCodecKey` (default H.264), `AVVideoWidthKey`, `AVVideoHeightKey`
    /// (required), `AVVideoCompressionPropertiesKey` with `AVVideoAverageBitRateKey`,
    /// `AVVideoMaxKeyFrameIntervalKey`, `AVVideoProfileLevelKey`,
    /// `AVVideoExpectedSourceFrameRateKey`, `AVVideoAllowFrameReorderingKey`. Any other key,
    /// or a value of the wrong kind, throws `.invalidArgument` naming the key and what it takes.
    public init(outputSettings dictionary: [String: Any]) throws(SwiftRecordError) {
        var top = try AppleSettingsReader(dictionary, what: "outputSettings", known: AppleSettingsReader.topKeys)
        let codec = try top.take(AVVideoCodecKey) { (v) throws(SwiftRecordError) in try AppleSettingsReader.codec(v) } ?? .h264
        guard let width = try top.take(AVVideoWidthKey, AppleSettingsReader.integer),
              let height = try top.take(AVVideoHeightKey, AppleSettingsReader.integer) else {
            throw SwiftRecordError(.invalidArgument, operation: "outputSettings",
                                   message: "AVVideoWidthKey and AVVideoHeightKey are required; expected the size in pixels")
        }
        self.init(codec: codec, width: width, height: height)
        guard let compression = try top.take(AVVideoCompressionPropertiesKey, { (v) throws(SwiftRecordError) -> [String: Any] in
            guard let d = v as? [String: Any] else { throw AppleSettingsReader.wrongKind("a dictionary of compression properties") }
            return d
        }) else { return }
        var props = try AppleSettingsReader(compression, what: "AVVideoCompressionPropertiesKey", known: AppleSettingsReader.compressionKeys)
        if let bps = try props.take(AVVideoAverageBitRateKey, AppleSettingsReader.integer) {
            guard bps > 0 else { throw AppleSettingsReader.bad(AVVideoAverageBitRateKey, "\(bps)", "a positive bit rate in bits per second") }
            rateControl = .averageBitRate(bps)
        }
        if let gop = try props.take(AVVideoMaxKeyFrameIntervalKey, AppleSettingsReader.integer) {
            guard gop > 0 else { throw AppleSettingsReader.bad(AVVideoMaxKeyFrameIntervalKey, "\(gop)", "a positive number of frames") }
            maxKeyFrameInterval = gop
        }
        if let seconds = try props.take(AVVideoMaxKeyFrameIntervalDurationKey, AppleSettingsReader.seconds) {
            maxKeyFrameIntervalDuration = seconds
        }
        if let rate = try props.take(AVVideoExpectedSourceFrameRateKey, AppleSettingsReader.frameRate) {
            expectedSourceFrameRate = rate
        }
        if let reorder = try props.take(AVVideoAllowFrameReorderingKey, { (v) throws(SwiftRecordError) -> Bool in
            guard let b = v as? Bool else { throw AppleSettingsReader.wrongKind("true or false") }
            return b
        }), !reorder {
            encoderOptions["bf"] = "0"
        }
        let codecForProfile = codec
        if let profile = try props.take(AVVideoProfileLevelKey, { (v) throws(SwiftRecordError) -> VideoProfileLevel in
            if let typed = v as? VideoProfileLevel { return typed }
            guard let s = v as? String else { throw AppleSettingsReader.wrongKind("a profile string such as AVVideoProfileLevelH264HighAutoLevel") }
            return try VideoProfileLevel(parsing: s, codec: codecForProfile)
        }) {
            guard profile.codec == codec else {
                throw AppleSettingsReader.bad(AVVideoProfileLevelKey, profile.profileString, "a \(codec) profile")
            }
            profileLevel = profile
        }
    }
}

extension AssetWriterInput {
    /// An input from an output-settings dictionary with Apple's keys
    /// (`AVAssetWriterInput(mediaType: .video, outputSettings: [...])`, or `.audio`); see
    /// `VideoSettings(outputSettings:)` and `AudioSettings(outputSettings:)` for the keys.
    /// Throws where Apple's raises an exception.
    public convenience init(mediaType: MediaType, outputSettings: [String: Any]) throws(SwiftRecordError) {
        switch mediaType {
        case .video: self.init(mediaType: .video, outputSettings: try VideoSettings(outputSettings: outputSettings))
        case .audio: self.init(mediaType: .audio, outputSettings: try AudioSettings(outputSettings: outputSettings))
        case .subtitle: throw AssetWriterInput.subtitlesPassThrough
        }
    }

    /// Subtitles are not encoded here: a subtitle input passes samples through.
    static let subtitlesPassThrough = SwiftRecordError(
        .unsupported, operation: "AssetWriterInput",
        message: "subtitles are only passed through: make the input with outputSettings nil and the track's formatDescription as sourceFormatHint")
}

/// Reads an Apple-keyed dictionary: each key taken once, by its value or its constant's
/// name; whatever is left at the end is an unknown key.
struct AppleSettingsReader {
    static let topKeys: [(name: String, value: String)] = [
        ("AVVideoCodecKey", AVVideoCodecKey), ("AVVideoWidthKey", AVVideoWidthKey), ("AVVideoHeightKey", AVVideoHeightKey),
        ("AVVideoCompressionPropertiesKey", AVVideoCompressionPropertiesKey),
    ]
    static let compressionKeys: [(name: String, value: String)] = [
        ("AVVideoAverageBitRateKey", AVVideoAverageBitRateKey), ("AVVideoMaxKeyFrameIntervalKey", AVVideoMaxKeyFrameIntervalKey),
        ("AVVideoMaxKeyFrameIntervalDurationKey", AVVideoMaxKeyFrameIntervalDurationKey),
        ("AVVideoProfileLevelKey", AVVideoProfileLevelKey), ("AVVideoExpectedSourceFrameRateKey", AVVideoExpectedSourceFrameRateKey),
        ("AVVideoAllowFrameReorderingKey", AVVideoAllowFrameReorderingKey),
    ]

    private var remaining: [String: Any]
    private let what: String
    private let known: [(name: String, value: String)]

    init(_ dictionary: [String: Any], what: String, known: [(name: String, value: String)]) throws(SwiftRecordError) {
        self.what = what
        self.known = known
        remaining = dictionary
        let accepted = Set(known.flatMap { [$0.name, $0.value] })
        if let unknown = dictionary.keys.sorted().first(where: { !accepted.contains($0) }) {
            throw SwiftRecordError(.invalidArgument, operation: what,
                                   message: "unknown key '\(unknown)' in \(what); expected one of \(known.map(\.name).joined(separator: ", "))")
        }
    }

    /// The value under `key` (Apple's value, or the constant's name), read by `read`.
    mutating func take<T>(_ key: String, _ read: (Any) throws(SwiftRecordError) -> T) throws(SwiftRecordError) -> T? {
        let name = known.first { $0.value == key }?.name ?? key
        guard let v = remaining.removeValue(forKey: key) ?? remaining.removeValue(forKey: name) else { return nil }
        do {
            return try read(v)
        } catch {
            throw SwiftRecordError(.invalidArgument, operation: what,
                                   message: "\(name) has \(String(describing: v)) (\(type(of: v))); \(error.message)")
        }
    }

    static func wrongKind(_ expected: String) -> SwiftRecordError {
        SwiftRecordError(.invalidArgument, operation: "outputSettings", message: "expected \(expected)")
    }

    static func bad(_ key: String, _ value: String, _ expected: String) -> SwiftRecordError {
        let name = (topKeys + compressionKeys + audioKeys).first { $0.value == key }?.name ?? key
        return SwiftRecordError(.invalidArgument, operation: "outputSettings", message: "\(name) is \(value); expected \(expected)")
    }

    static func integer(_ v: Any) throws(SwiftRecordError) -> Int {
        switch v {
        case let i as Int: return i
        case let i as Int32: return Int(i)
        case let i as Int64: if let n = Int(exactly: i) { return n }
        case let u as UInt: if let n = Int(exactly: u) { return n }
        case let d as Double: if d.isFinite, d.rounded() == d, let n = Int(exactly: d) { return n }
        case let f as Float: if f.isFinite, f.rounded() == f, let n = Int(exactly: f) { return n }
        case let n as NSNumber: if let i = Int(exactly: n.doubleValue) { return i }
        default: break
        }
        throw wrongKind("a whole number")
    }

    static func seconds(_ v: Any) throws(SwiftRecordError) -> Double {
        let d: Double? = switch v {
        case let d as Double: d
        case let f as Float: Double(f)
        case let n as NSNumber: n.doubleValue
        default: (try? integer(v)).map(Double.init)
        }
        guard let d, d.isFinite, d > 0 else { throw wrongKind("a positive number of seconds") }
        return d
    }

    static func frameRate(_ v: Any) throws(SwiftRecordError) -> Rational {
        if let r = v as? Rational, r.numerator > 0 { return r }
        if let i = try? integer(v), i > 0, let r = Rational(Int32(clamping: i)) { return r }
        if let d = (v as? Double) ?? (v as? Float).map(Double.init), d.isFinite, d > 0, let r = Rational(parsing: "\(d)") { return r }
        throw wrongKind("a positive frame rate such as 30 or 29.97")
    }

    static func codec(_ v: Any) throws(SwiftRecordError) -> VideoCodec {
        if let c = v as? VideoCodec { return c }
        guard let s = v as? String else { throw wrongKind("AVVideoCodecType.h264 or .hevc, or a codec name") }
        switch s.lowercased() {
        case "avc1", "h264", "avc": return .h264
        case "hvc1", "hev1", "hevc", "h265": return .hevc
        case "vp09", "vp9": return .vp9
        case "av01", "av1": return .av1
        case "ffv1": return .ffv1
        default: throw wrongKind("avc1 (H.264), hvc1 (HEVC), vp09, av01 or ffv1")
        }
    }
}
