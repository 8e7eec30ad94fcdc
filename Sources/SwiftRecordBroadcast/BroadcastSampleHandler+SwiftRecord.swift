import SwiftRecord
import SwiftRecordBroadcastWire

// The sender's calls on SwiftRecord's types: a shared buffer as a PixelBuffer, pictures as
// SampleBuffers, times as MediaTimes on `MonotonicClock` (the wire module's core takes
// planes and nanoseconds, for senders without FFmpeg).

extension BroadcastSampleHandler.Stream {
    public init(width: Int, height: Int, frameRate: Rational, sampleRate: Int = 48_000, channels: Int = 2) {
        self.init(width: width, height: height, frameRateNumerator: Int(frameRate.numerator), frameRateDenominator: Int(frameRate.denominator),
                  sampleRate: sampleRate, channels: channels)
    }
}

extension BroadcastSampleHandler {
    /// A free shared picture buffer to draw into, or nil when the recorder holds them all
    /// (the frame is counted as dropped).
    public func nextPixelBuffer() throws(BroadcastError) -> PixelBuffer? {
        guard let (index, ring, base) = try lendBuffer() else { return nil }
        let layout = ring.layout
        let sender = self.sender
        do {
            return try PixelBuffer(wrappingPlanes: base, length: layout.size, width: stream.width, height: stream.height, pixelFormat: .yuv420p,
                                   planeOffsets: layout.offsets, bytesPerRow: layout.strides) {
                withExtendedLifetime(ring) { sender.returnSlot(index) }
            }
        } catch {
            sender.returnSlot(index)
            throw BroadcastError(message: error.message)
        }
    }

    /// Sends a picture (`sampleBuffer.pixelBuffer` must come from `nextPixelBuffer()`).
    public func processSampleBuffer(_ sampleBuffer: SampleBuffer, with type: BroadcastSampleType) throws(BroadcastError) {
        try Self.requireVideo(type)
        guard let index = sender.slot(at: sampleBuffer.pixelBuffer.storageIdentity) else {
            throw BroadcastError(message: "the picture is not a buffer from nextPixelBuffer()")
        }
        try sender.sendSlot(index, time: sampleBuffer.presentationTimeStamp.convertScale(1_000_000_000).value)
    }

    /// Sends interleaved 16-bit sound of the stream's rate and channels, presented at `time`
    /// (`CLOCK_MONOTONIC`), typed `.audioApp` or `.audioMic`.
    public func processAudio(_ samples: [Int16], presentationTime time: MediaTime, with type: BroadcastSampleType) throws(BroadcastError) {
        try processAudio(samples, presentationTime: time.convertScale(1_000_000_000).value, with: type)
    }
}
