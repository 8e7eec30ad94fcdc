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
    /// Scale the content to `width` x `height` (here always: see the porting table).
    public var scalesToFit = true
    /// Pictures that may wait for the outputs (3 to 8 on the Mac); older ones are dropped.
    public var queueDepth = 8
    public var capturesAudio = false
    public var sampleRate = 48_000
    public var channelCount = 2
    public var excludesCurrentProcessAudio = false
    public var captureMicrophone = false

    public init() {}

    /// The frame rate `minimumFrameInterval` allows (60 when zero).
    var frameRate: Rational {
        let i = minimumFrameInterval
        guard i.isNumeric, i.value > 0, i.timescale > 0, let r = Rational(i.timescale, Int32(clamping: i.value)) else { return Rational(60)! }
        return r
    }
}
