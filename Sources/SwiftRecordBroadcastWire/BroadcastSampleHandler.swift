import Glibc
import SwiftRecordBase

/// ReplayKit's sample buffer types (`RPSampleBufferType`).
public enum BroadcastSampleType: Sendable {
    case video, audioApp, audioMic
}

/// The sending end of a broadcast, shaped like ReplayKit's `RPBroadcastSampleHandler`: a
/// program that should be recorded without linking an encoder hands its pictures and sound
/// to a recorder listening on a name (`swift-record --source broadcast:NAME`).
///
/// `broadcastStarted(withSetupInfo:)` connects and says hello; the recorder answers with a
/// ring of shared picture buffers it allocated. `nextPicture()` lends a free one (nil when
/// the recorder still holds them all: that frame is dropped and counted, the render loop
/// never waits); draw into its planes and pass it to
/// `processSampleBuffer(_:presentationTime:with:)` with its presentation time in
/// nanoseconds of `CLOCK_MONOTONIC`. Only the buffer's index crosses the socket. Sound goes
/// as 16-bit interleaved PCM chunks typed app or microphone.
///
/// This module needs neither FFmpeg nor Foundation, so a sender that uses it alone keeps
/// within a broadcast extension's memory cap; SwiftRecordBroadcast adds the same calls on
/// SwiftRecord's pixel buffers, sample buffers and times (`nextPixelBuffer()`).
///
/// Every call fails at once with `BroadcastError` once the recorder has gone; the sender's
/// process is unharmed (no `SIGPIPE`).
public final class BroadcastSampleHandler: Sendable {
    /// What a sender says about its stream; the recorder sizes its ring from it.
    public struct Stream: Sendable {
        public var width: Int, height: Int
        public var frameRateNumerator: Int, frameRateDenominator: Int
        public var sampleRate: Int, channels: Int
        public init(width: Int, height: Int, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1, sampleRate: Int = 48_000, channels: Int = 2) {
            (self.width, self.height, self.sampleRate, self.channels) = (width, height, sampleRate, channels)
            (self.frameRateNumerator, self.frameRateDenominator) = (frameRateNumerator, frameRateDenominator)
        }
    }

    /// Frames sent, frames dropped because no buffer was free, and sound chunks sent.
    public struct Counts: Sendable, Equatable {
        public var framesSent = 0
        public var framesDropped = 0
        public var soundChunksSent = 0
    }

    /// The connection, the ring and its buffers (`libSwiftRecordSender.so`'s too).
    package let sender: BroadcastSender
    /// The recorder's name.
    public var name: String { sender.name }
    public var stream: Stream { sender.stream }

    public init(name: String, stream: Stream) {
        sender = BroadcastSender(name: name, stream: stream)
    }

    /// Connects to the recorder and receives its picture ring, which the recorder sends as
    /// its recording starts (within 30 s; a refusal comes at once). `setupInfo` is
    /// ReplayKit's; the key "name" names this sender in the recorder's messages.
    public func broadcastStarted(withSetupInfo setupInfo: [String: String]? = nil) throws(BroadcastError) {
        try sender.start(senderName: setupInfo?["name"] ?? "pid \(getpid())")
    }

    /// A free shared picture buffer to draw into, or nil when the recorder holds them all
    /// (the frame is counted as dropped).
    public func nextPicture() throws(BroadcastError) -> BroadcastPicture? {
        guard let (index, ring, base) = try lendBuffer() else { return nil }
        return BroadcastPicture(sender: sender, ring: ring, index: index, base: base, width: stream.width, height: stream.height)
    }

    /// A free shared buffer, lent (the caller gives it back with `sender.returnSlot` or sends
    /// it), with its ring and its bytes; nil when the recorder holds them all.
    package func lendBuffer() throws(BroadcastError) -> (index: Int, ring: SharedPictureRing, base: UnsafeMutableRawPointer)? {
        guard let (index, ring) = try sender.lendSlot() else { return nil }
        guard let base = ring.base(index) else {
            sender.returnSlot(index)
            return nil
        }
        return (index, ring, base)
    }

    /// Sends a picture from `nextPicture()`, presented at `nanoseconds` (`CLOCK_MONOTONIC`).
    public func processSampleBuffer(_ picture: BroadcastPicture, presentationTime nanoseconds: Int64, with type: BroadcastSampleType) throws(BroadcastError) {
        try Self.requireVideo(type)
        guard picture.sender === sender else { throw BroadcastError(message: "the picture is not a buffer from this handler's nextPicture()") }
        try sender.sendSlot(picture.index, time: nanoseconds)
    }

    /// Sends interleaved 16-bit sound of the stream's rate and channels, presented at
    /// `nanoseconds` (`CLOCK_MONOTONIC`), typed `.audioApp` or `.audioMic`.
    public func processAudio(_ samples: [Int16], presentationTime nanoseconds: Int64, with type: BroadcastSampleType) throws(BroadcastError) {
        guard type != .video else { throw BroadcastError(message: "sound sent as .video; sound is .audioApp or .audioMic") }
        try samples.withUnsafeBufferPointer { (buffer) throws(BroadcastError) in
            try sender.sendSound(buffer, time: nanoseconds, kind: type == .audioApp ? .app : .microphone)
        }
    }

    /// Pictures are `.video`: anything else fails.
    package static func requireVideo(_ type: BroadcastSampleType) throws(BroadcastError) {
        guard type == .video else { throw BroadcastError(message: "a picture sent as \(type); pictures are .video") }
    }

    /// Pauses the broadcast: the recorder pauses its recording after the pictures sent so far.
    public func broadcastPaused() throws(BroadcastError) { try sender.pause() }
    /// Resumes it: the recording goes on, without a gap, with the next picture sent.
    public func broadcastResumed() throws(BroadcastError) { try sender.resume() }

    /// Says the broadcast is over (the recorder finishes its file) and closes the connection.
    public func broadcastFinished() throws(BroadcastError) { try sender.finish() }

    public var counts: Counts { sender.counts }

    /// Now on `CLOCK_MONOTONIC`, in nanoseconds: the clock presentation times are on.
    public static func now() -> Int64 { monotonicNanoseconds() }
}

/// A shared picture buffer lent by `BroadcastSampleHandler.nextPicture()`: the recorder's
/// yuv420p picture, mapped in this process. Draw into its planes (rows `bytesPerRow` apart),
/// then send it; one released unsent goes back to the free buffers.
public final class BroadcastPicture {
    public let width: Int, height: Int
    /// The luma plane's and the two chroma planes' first bytes (chroma at half width and height).
    public let y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>
    /// Bytes from one row of each plane to the next.
    public let yBytesPerRow: Int, uBytesPerRow: Int, vBytesPerRow: Int
    let sender: BroadcastSender
    let ring: SharedPictureRing
    let index: Int

    init(sender: BroadcastSender, ring: SharedPictureRing, index: Int, base: UnsafeMutableRawPointer, width: Int, height: Int) {
        (self.sender, self.ring, self.index, self.width, self.height) = (sender, ring, index, width, height)
        let l = ring.layout
        let p = base.assumingMemoryBound(to: UInt8.self)
        (y, u, v) = (p + l.offsets[0], p + l.offsets[1], p + l.offsets[2])
        (yBytesPerRow, uBytesPerRow, vBytesPerRow) = (l.strides[0], l.strides[1], l.strides[2])
    }

    deinit { sender.returnSlot(index) }
}
