import ArgumentParser
import SwiftRecord

/// `--frame-rate-mode`: one frame per tick, or frames only where the picture changed.
struct FrameRateOptions: ParsableArguments {
    enum Mode: String, ExpressibleByArgument {
        case constant, content
    }

    @Option(help: ArgumentHelp("constant (one frame per tick, the default) or content: a frame only when the picture changed, as damage-driven screen capture sees it (a variable frame rate on the --fps grid: far less encoding on a still screen), with a key frame at least every key-frame interval.", valueName: "mode"))
    var frameRateMode: Mode = .constant

    /// The session's frame-rate mode for `settings` at `frameRate`; at a content-driven
    /// rate, `settings` gets the key-frame interval in time too (frames are far apart).
    func mode(adjusting settings: inout VideoSettings, frameRate: Rational) -> FrameRateMode {
        guard frameRateMode == .content else { return .constant }
        let gop = Int64(max(1, settings.maxKeyFrameInterval ?? 1))
        let interval = MediaTime(value: gop * Int64(frameRate.denominator), timescale: frameRate.numerator)
        settings.maxKeyFrameIntervalDuration = interval.seconds
        // No frame reordering: with B-frames the encoder gives a frame the decode time of
        // one a few frames before it, which at a content-driven rate can be seconds before
        // its presentation time, and an MP4's durations (decode-time steps) then add up to
        // far less than the recording.
        settings.encoderOptions["bf"] = "0"
        return .content(maximumInterval: interval)
    }
}
