import Glibc
import SwiftRecord
import SwiftRecordBroadcastWire

/// ReplayKit's sample buffer types (`RPSampleBufferType`).
public enum BroadcastSampleType: Sendable {
    case video, audioApp, audioMic
}

/// The sending end of a broadcast, shaped like ReplayKit's `RPBroadcastSampleHandler`: a
/// program that should be recorded without linking an encoder hands its pictures and sound
/// to a recorder listening on a name (`swift-record --source broadcast:NAME`).
///
/// `broadcastStarted(withSetupInfo:)` connects and says hello; the recorder answers with a
/// ring of shared picture buffers it allocated. `nextPixelBuffer()` lends a free one (nil
/// when the recorder still holds them all: that frame is dropped and counted, the render
/// loop never waits); draw into it and pass it to `processSampleBuffer(_:with:)` with its
/// presentation time on `CLOCK_MONOTONIC` (`MonotonicClock`). Only the buffer's index
/// crosses the socket. Sound goes as 16-bit interleaved PCM chunks typed app or microphone.
///
/// Every call fails at once with `BroadcastError` once the recorder has gone; the sender's
/// process is unharmed (no `SIGPIPE`).
public final class BroadcastSampleHandler: Sendable {
    /// What a sender says about its stream; the recorder sizes its ring from it.
    public struct Stream: Sendable {
        public var width: Int, height: Int
        public var frameRate: Rational
        public var sampleRate: Int, channels: Int
        public init(width: Int, height: Int, frameRate: Rational = Rational(30)!, sampleRate: Int = 48_000, channels: Int = 2) {
            (self.width, self.height, self.frameRate, self.sampleRate, self.channels) = (width, height, frameRate, sampleRate, channels)
        }
    }

    /// Frames dropped because no buffer was free, and frames sent.
    public struct Counts: Sendable, Equatable {
        public var framesSent = 0
        public var framesDropped = 0
        public var soundChunksSent = 0
    }

    /// The connection, the ring and its buffers (`libSwiftRecordSender.so`'s too).
    package let sender: BroadcastSender
    /// The recorder's name.
    public var name: String { sender.name }
    public let stream: Stream

    public init(name: String, stream: Stream) {
        self.stream = stream
        sender = BroadcastSender(name: name, stream: .init(width: stream.width, height: stream.height,
                                                           frameRateNumerator: Int(stream.frameRate.numerator),
                                                           frameRateDenominator: Int(stream.frameRate.denominator),
                                                           sampleRate: stream.sampleRate, channels: stream.channels))
    }

    /// Connects to the recorder and receives its picture ring, which the recorder sends as
    /// its recording starts (within 30 s; a refusal comes at once). `setupInfo` is
    /// ReplayKit's; the key "name" names this sender in the recorder's messages.
    public func broadcastStarted(withSetupInfo setupInfo: [String: String]? = nil) throws(BroadcastError) {
        try sender.start(senderName: setupInfo?["name"] ?? "pid \(getpid())")
    }

    /// A free shared picture buffer to draw into, or nil when the recorder holds them all
    /// (the frame is counted as dropped).
    public func nextPixelBuffer() throws(BroadcastError) -> PixelBuffer? {
        guard let (index, ring) = try sender.lendSlot(), let base = ring.base(index) else { return nil }
        let layout = ring.layout
        let sender = self.sender
        do {
            return try PixelBuffer(wrappingPlanes: base, length: layout.size, width: stream.width, height: stream.height, pixelFormat: .yuv420p,
                                   planeOffsets: layout.offsets, bytesPerRow: layout.strides) {
                withExtendedLifetime(ring) { sender.returnSlot(index) }
            }
        } catch {
            throw BroadcastError(message: error.message)
        }
    }

    /// Sends a picture (`sampleBuffer.pixelBuffer` must come from `nextPixelBuffer()`).
    public func processSampleBuffer(_ sampleBuffer: SampleBuffer, with type: BroadcastSampleType) throws(BroadcastError) {
        guard type == .video else {
            throw BroadcastError(message: "a picture sent as \(type); pictures are .video")
        }
        guard let index = sender.slot(at: sampleBuffer.pixelBuffer.storageIdentity) else {
            throw BroadcastError(message: "the picture is not a buffer from nextPixelBuffer()")
        }
        try sender.sendSlot(index, time: sampleBuffer.presentationTimeStamp.convertScale(1_000_000_000).value)
    }

    /// Sends interleaved 16-bit sound of the stream's rate and channels, presented at `time`
    /// (`CLOCK_MONOTONIC`), typed `.audioApp` or `.audioMic`.
    public func processAudio(_ samples: [Int16], presentationTime time: MediaTime, with type: BroadcastSampleType) throws(BroadcastError) {
        guard type != .video else { throw BroadcastError(message: "sound sent as .video; sound is .audioApp or .audioMic") }
        let nanoseconds = time.convertScale(1_000_000_000).value
        try samples.withUnsafeBufferPointer { (buffer) throws(BroadcastError) in
            try sender.sendSound(buffer, time: nanoseconds, kind: type == .audioApp ? .app : .microphone)
        }
    }

    /// Pauses the broadcast: the recorder pauses its recording after the pictures sent so far.
    public func broadcastPaused() throws(BroadcastError) { try sender.pause() }
    /// Resumes it: the recording goes on, without a gap, with the next picture sent.
    public func broadcastResumed() throws(BroadcastError) { try sender.resume() }

    /// Says the broadcast is over (the recorder finishes its file) and closes the connection.
    public func broadcastFinished() throws(BroadcastError) { try sender.finish() }

    public var counts: Counts {
        let c = sender.counts
        return Counts(framesSent: c.framesSent, framesDropped: c.framesDropped, soundChunksSent: c.soundChunksSent)
    }
}
