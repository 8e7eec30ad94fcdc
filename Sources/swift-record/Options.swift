import ArgumentParser
import SwiftRecord

/// Turns a library parser into an ArgumentParser transform whose error says what was expected.
func parsed<T>(_ parse: @escaping @Sendable (String) throws(SwiftRecordError) -> T) -> @Sendable (String) throws -> T {
    { (text: String) throws -> T in
        do throws(SwiftRecordError) { return try parse(text) } catch { throw ValidationError(error.message) }
    }
}

/// The error for a whole-number option outside its range, saying so plainly when the
/// value is negative: "--keyint -5 is negative; expected 1 to 10000 frames".
func outOfRange(_ option: String, _ value: Int, expected: String, otherwise: String = "is out of range") -> ValidationError {
    ValidationError("\(option) \(value) \(value < 0 ? "is negative" : otherwise); expected \(expected)")
}

extension VideoCodec: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// Encoder options shared by `record` and `convert`.
struct EncoderOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Video codec: h264, hevc, vp9, av1 (or ffv1 in .mkv). Default: the container's, h264 (vp9 for .webm).", valueName: "codec"))
    var codec: VideoCodec?

    @Option(help: ArgumentHelp("Average bit rate in bits per second: 2M, 2500k, 2000000.", valueName: "rate"),
            transform: parsed(ValueParsing.bitRate))
    var bitrate: Int = 2_000_000

    @Option(help: ArgumentHelp("Constant quality instead of a bit rate (x264's CRF: 0–51, lower is better; 18–23 is typical).", valueName: "n"))
    var crf: Int?

    @Option(help: ArgumentHelp("Constant quantiser instead of a bit rate (0–51).", valueName: "n"))
    var qp: Int?

    @Option(help: ArgumentHelp("Encoder preset, x264's names: ultrafast … veryslow (mapped for VP9 and AV1).", valueName: "name"),
            completion: .list(EncoderOptions.presets))
    var preset: String = "veryfast"

    @Option(help: ArgumentHelp("Largest key-frame interval in frames (default: 2 seconds' worth).", valueName: "frames"))
    var keyint: Int?

    @Option(help: ArgumentHelp("Encoder threads (0 = automatic). Pin to 1 for byte-identical output.", valueName: "n"))
    var threads: Int = 0

    /// What the encoder takes, which damage-driven sources deliver directly.
    static let pixelFormat = PixelFormat.yuv420p
    static let colorProperties = ColorProperties.bt709

    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    func validate() throws {
        guard EncoderOptions.presets.contains(preset) else {
            throw ValidationError("--preset '\(preset)' is not a preset; expected one of \(EncoderOptions.presets.joined(separator: ", "))")
        }
        if crf != nil && qp != nil {
            throw ValidationError("--crf and --qp both choose the rate control; pass one of them")
        }
        if let keyint, keyint < 1 || keyint > 10_000 {
            throw outOfRange("--keyint", keyint, expected: "1 to 10000 frames")
        }
        guard (0...64).contains(threads) else {
            throw outOfRange("--threads", threads, expected: "0 (automatic) to 64")
        }
    }

    /// The codec for a file of `fileType` (nil: the default output's, which carries H.264):
    /// --codec, else the container's own (`FileType.defaultVideoCodec`). Checks that the
    /// container carries it and that --crf / --qp are in its range.
    func resolvedCodec(for fileType: FileType?) throws -> VideoCodec {
        let chosen = codec ?? fileType?.defaultVideoCodec ?? .h264
        if let fileType, !fileType.supports(chosen) {
            throw fileType.refusal(of: chosen, operation: "--codec")
        }
        // x264 and x265 take 0–51; libvpx and SVT-AV1 0–63.
        let highest = chosen == .vp9 || chosen == .av1 ? 63 : 51
        for (name, value) in [("--crf", crf), ("--qp", qp)] {
            if let value, !(0...highest).contains(value) {
                throw outOfRange(name, value, expected: "0 to \(highest) for \(chosen) (up to 63 for VP9 and AV1)", otherwise: "is out of range for \(chosen)")
            }
        }
        return chosen
    }

    /// --crf, else --qp, else --bitrate.
    var rateControl: RateControl {
        if let crf { return .constantQuality(crf) }
        if let qp { return .constantQuantizer(qp) }
        return .averageBitRate(bitrate)
    }

    /// High, what players expect; lossless (--qp 0, --crf 0) needs High 4:4:4 Predictive,
    /// the only H.264 profile that codes it.
    var h264Profile: String { qp == 0 || crf == 0 ? "high444" : "high" }

    func settings(codec: VideoCodec, width: Int, height: Int, frameRate: Rational) -> VideoSettings {
        let gop = keyint ?? max(1, Int((2 * frameRate.doubleValue).rounded()))
        return VideoSettings(codec: codec, width: width, height: height, pixelFormat: EncoderOptions.pixelFormat,
                             rateControl: rateControl, maxKeyFrameInterval: gop,
                             expectedSourceFrameRate: frameRate, profile: codec == .h264 ? h264Profile : nil,
                             preset: preset, threads: threads == 0 ? nil : threads, colorProperties: EncoderOptions.colorProperties)
    }
}
