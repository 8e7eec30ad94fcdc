import CoreMedia
import CoreVideo
import Foundation

/// How a stream captures: the pictures' size, rate, pixel format and cursor, and sound.
public final class SCStreamConfiguration: @unchecked Sendable {
    // @unchecked: a plain settings object, set before the stream starts and copied by it.
    /// The pictures' size; 0 (the default): the content's own size.
    public var width = 0
    public var height = 0
    /// The shortest time between pictures; zero (the default): 60 per second.
    public var minimumFrameInterval = CMTime.zero
    /// `kCVPixelFormatType_32BGRA` (the default), `_420YpCbCr8Planar`, `_420YpCbCr8BiPlanarVideoRange`, ….
    public var pixelFormat: OSType = kCVPixelFormatType_32BGRA
    public var showsCursor = true
    /// Part of a display to capture, in its pixels; empty (the default): all of it.
    public var sourceRect = CGRect.zero
    /// Scale the content to `width` x `height` (the default); false: the content at its own
    /// size in the picture's top-left corner, the rest black, cut where it is larger (the
    /// `contentRect` attachment says where it lies).
    public var scalesToFit = true
    /// Pictures that may wait for the outputs (3 to 8 on the Mac); older ones are dropped
    /// and counted (`SCStream.droppedFrameCount`), the grab never waits.
    public var queueDepth = 8
    /// The desktop's sound to `.audio` outputs: the default PulseAudio sink's monitor
    /// (what the speakers play), on the pictures' clock.
    public var capturesAudio = false
    /// The sound's rate and channels (the server converts).
    public var sampleRate = 48_000
    public var channelCount = 2
    /// Leave this process's own sound out of `capturesAudio`. A PulseAudio monitor mixes
    /// every stream of its sink, so this is honoured while the process plays nothing: a
    /// stream that would hold its sound fails instead (at the start, or within a second
    /// of the process starting to play).
    public var excludesCurrentProcessAudio = false
    /// The microphone to `.microphone` outputs: `microphoneCaptureDeviceID`'s PulseAudio
    /// source, else the server's default source.
    public var captureMicrophone = false
    /// A PulseAudio source name (`pactl list short sources`); nil: the default source.
    public var microphoneCaptureDeviceID: String?

    public init() {}

    /// The frame rate `minimumFrameInterval` allows (60 when zero).
    var frameRate: Rational {
        let i = minimumFrameInterval
        guard i.isNumeric, i.value > 0, i.timescale > 0, let r = Rational(i.timescale, Int32(clamping: i.value)) else { return Rational(60)! }
        return r
    }
}
