import Foundation

/// An audio source recorded beside a capture session's pictures, into an audio input of
/// the same writer: a track of its own, or one source of an input that mixes several
/// (`AssetWriterInput.mixVolumes`; several captures then share the input, each with its
/// own `mixSource`).
public struct AudioCapture: Sendable {
    public let source: any AudioCaptureSource
    public let input: AssetWriterInput
    /// Which of the input's mixed sources this is (its index in `mixVolumes`); 0 for an
    /// input of one source.
    public let mixSource: Int

    public init(source: any AudioCaptureSource, input: AssetWriterInput, mixSource: Int = 0) {
        self.source = source
        self.input = input
        self.mixSource = mixSource
    }
}

/// What the session's audio did.
public struct AudioCaptureStatistics: Sendable, Codable, Equatable {
    /// Buffers handed to the writer and the seconds of sound in them.
    public var buffers = 0
    public var seconds = 0.0
    /// Times the source reported lost samples (an overrun, a suspended device).
    public var sourceGaps = 0
    /// Buffers (or parts) dropped because they were captured while paused.
    public var droppedPaused = 0
    /// Why the audio ended before the recording did (the device went away), if it did.
    public var endedEarly: String?
    /// The writer's synchronisation: offsets measured and corrections made.
    public var sync = AudioSyncStatistics()
    /// Seconds of silence added after the source ended early, so the track lasts as long
    /// as the pictures.
    public var silenceFilledSeconds = 0.0
    public init() {}
}

extension AudioSampleBuffer {
    /// The same samples with a linear fade in (or out) over the first (last) `seconds`.
    func faded(in fadeIn: Bool, seconds: Double) -> AudioSampleBuffer {
        let n = min(frameCount, max(1, Int(seconds * Double(format.sampleRate))))
        let channelsPerPlane = format.isPlanar ? 1 : format.channelCount
        let bytes = format.sampleType.bytesPerSample
        let planes = self.planes.map { plane -> [UInt8] in
            var p = plane
            p.withUnsafeMutableBytes { raw in
                for k in 0..<n {
                    let frame = fadeIn ? k : frameCount - 1 - k
                    let gain = Double(k) / Double(n)
                    for c in 0..<channelsPerPlane {
                        let offset = (frame * channelsPerPlane + c) * bytes
                        switch format.sampleType {
                        case .s16:
                            let v = raw.load(fromByteOffset: offset, as: Int16.self)
                            raw.storeBytes(of: Int16(Double(v) * gain), toByteOffset: offset, as: Int16.self)
                        case .s32:
                            let v = raw.load(fromByteOffset: offset, as: Int32.self)
                            raw.storeBytes(of: Int32(Double(v) * gain), toByteOffset: offset, as: Int32.self)
                        case .f32:
                            let v = raw.load(fromByteOffset: offset, as: Float.self)
                            raw.storeBytes(of: Float(Double(v) * gain), toByteOffset: offset, as: Float.self)
                        }
                    }
                }
            }
            return p
        }
        return AudioSampleBuffer(format: format, frameCount: frameCount, presentationTimeStamp: presentationTimeStamp, planes: planes)
    }
}
