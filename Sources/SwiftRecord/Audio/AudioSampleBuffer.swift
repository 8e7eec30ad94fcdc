/// PCM samples with the presentation time of the first one: what an audio
/// `AssetWriterInput` takes (`CMSampleBuffer` carrying audio on Apple platforms).
///
/// The samples are held in Swift arrays, one per plane (one for interleaved formats),
/// copied in when the buffer is made; a buffer is an immutable value.
public struct AudioSampleBuffer: Sendable {
    /// How the samples are laid out: sample type, interleaving, rate and channels.
    public let format: AudioFormat
    /// Sample frames (samples per channel) in the buffer.
    public let frameCount: Int
    /// When the first sample plays, on the source's timeline.
    public let presentationTimeStamp: MediaTime
    /// The bytes of each plane, `frameCount * format.bytesPerFrameInPlane` each.
    public let planes: [[UInt8]]

    /// A buffer from the raw bytes of each plane (one plane for an interleaved format).
    /// Throws when the plane count or sizes do not fit `format`, naming what was expected.
    public init(format: AudioFormat, presentationTimeStamp: MediaTime, planes: [[UInt8]]) throws(SwiftRecordError) {
        try format.validate("AudioSampleBuffer")
        guard planes.count == format.planeCount else {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSampleBuffer",
                                   message: "\(planes.count) planes given; \(format) has \(format.planeCount)")
        }
        let bytesPerFrame = format.bytesPerFrameInPlane
        let frames = (planes.first?.count ?? 0) / bytesPerFrame
        for (i, plane) in planes.enumerated() where plane.count != frames * bytesPerFrame || plane.count % bytesPerFrame != 0 {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSampleBuffer",
                                   message: "plane \(i) holds \(plane.count) bytes; expected \(frames) frames of \(bytesPerFrame) bytes, like plane 0")
        }
        self.format = format
        self.frameCount = frames
        self.presentationTimeStamp = presentationTimeStamp
        self.planes = planes
    }

    /// Interleaved 16-bit samples (`format` must be `.s16`, not planar).
    public init(format: AudioFormat, presentationTimeStamp: MediaTime, interleaved samples: [Int16]) throws(SwiftRecordError) {
        try self.init(format: format, presentationTimeStamp: presentationTimeStamp,
                      planes: [AudioSampleBuffer.bytes(of: samples, as: .s16, format: format)])
    }

    /// Interleaved float samples (`format` must be `.f32`, not planar).
    public init(format: AudioFormat, presentationTimeStamp: MediaTime, interleaved samples: [Float]) throws(SwiftRecordError) {
        try self.init(format: format, presentationTimeStamp: presentationTimeStamp,
                      planes: [AudioSampleBuffer.bytes(of: samples, as: .f32, format: format)])
    }

    private static func bytes<T>(of samples: [T], as type: AudioFormat.SampleType, format: AudioFormat) throws(SwiftRecordError) -> [UInt8] {
        guard format.sampleType == type, !format.isPlanar else {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSampleBuffer",
                                   message: "interleaved \(type) samples given for a buffer of \(format)")
        }
        guard samples.count % max(1, format.channelCount) == 0 else {
            throw SwiftRecordError(.invalidArgument, operation: "AudioSampleBuffer",
                                   message: "\(samples.count) samples is not a whole number of \(format.channelCount)-channel frames")
        }
        return samples.withUnsafeBytes { Array($0) }
    }

    /// How long the buffer plays.
    public var duration: MediaTime {
        MediaTime(value: Int64(frameCount), timescale: Int32(clamping: format.sampleRate))
    }

    /// The same samples at another time.
    public func withPresentationTimeStamp(_ time: MediaTime) -> AudioSampleBuffer {
        AudioSampleBuffer(format: format, frameCount: frameCount, presentationTimeStamp: time, planes: planes)
    }

    /// Frames `range` of this buffer, its time moved to match.
    public func slice(_ range: Range<Int>) -> AudioSampleBuffer {
        let r = range.clamped(to: 0..<frameCount)
        let b = format.bytesPerFrameInPlane
        let time = presentationTimeStamp.isNumeric
            ? presentationTimeStamp + MediaTime(value: Int64(r.lowerBound), timescale: Int32(clamping: format.sampleRate))
            : presentationTimeStamp
        return AudioSampleBuffer(format: format, frameCount: r.count, presentationTimeStamp: time,
                                 planes: planes.map { Array($0[(r.lowerBound * b)..<(r.upperBound * b)]) })
    }

    /// `frameCount` frames of silence in `format`, stamped `time` (zero is silence in
    /// every sample type here: signed integers and floats).
    static func silence(format: AudioFormat, frameCount: Int, at time: MediaTime) -> AudioSampleBuffer {
        let bytes = [UInt8](repeating: 0, count: frameCount * format.bytesPerFrameInPlane)
        return AudioSampleBuffer(format: format, frameCount: frameCount, presentationTimeStamp: time,
                                 planes: Array(repeating: bytes, count: format.planeCount))
    }

    /// Runs `body` with the planes' base addresses side by side (one per plane, as
    /// libswresample takes them): no copy, and nothing allocated on the heap.
    func withPlanePointers<R>(_ body: (UnsafeMutablePointer<UnsafePointer<UInt8>?>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: planes.count + 1) { pointers in
            pointers.initialize(repeating: nil)
            // Each plane's storage is pinned by its own scope, so one scope per plane, nested.
            func pin(from plane: Int) -> R {
                guard plane < planes.count else { return body(pointers.baseAddress.unsafelyUnwrapped) }
                return planes[plane].withUnsafeBufferPointer { bytes in
                    pointers[plane] = bytes.baseAddress
                    return pin(from: plane + 1)
                }
            }
            return pin(from: 0)
        }
    }

    init(format: AudioFormat, frameCount: Int, presentationTimeStamp: MediaTime, planes: [[UInt8]]) {
        self.format = format
        self.frameCount = frameCount
        self.presentationTimeStamp = presentationTimeStamp
        self.planes = planes
    }
}
