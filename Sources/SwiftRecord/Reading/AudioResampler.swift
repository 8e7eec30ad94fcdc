internal import CFFmpeg

/// A reader's sound conversion: a decoder's frames (any sample format, rate, layout) to the
/// PCM a track output was asked for, through a ``Resampler`` (the one owner of a
/// `SwrContext`), made when the first frame shows the decoder's format. Not `Sendable`: one
/// output's.
final class AudioResampler {
    private let resampler: Resampler
    private var context: OpaquePointer { resampler.context }
    let output: AudioFormat
    private let operation: String

    init(from frame: UnsafePointer<AVFrame>, to output: AudioFormat, operation: String) throws(SwiftRecordError) {
        self.output = output
        self.operation = operation
        var outLayout = output.channelLayout.makeAVChannelLayout()
        defer { av_channel_layout_uninit(&outLayout) }
        resampler = try Resampler(output: (outLayout, output.avSampleFormat, Int32(output.sampleRate)),
                                  input: (frame.pointee.ch_layout, AVSampleFormat(rawValue: frame.pointee.format), frame.pointee.sample_rate),
                                  hint: "\(operation): cannot convert the decoded sound")
    }

    /// Converts `frame` (nil: drains what the resampler holds) into planes of `output`.
    func convert(_ frame: UnsafePointer<AVFrame>?) throws(SwiftRecordError) -> (planes: [[UInt8]], count: Int) {
        let inCount = Int32(frame?.pointee.nb_samples ?? 0)
        let capacity = Int(swr_get_out_samples(context, inCount)) + 32
        guard capacity > 0 else { return ([], 0) }
        let planeBytes = capacity * output.bytesPerFrameInPlane
        let storage = (0..<output.planeCount).map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: planeBytes) }
        defer { for p in storage { p.deallocate() } }
        var outPlanes: [UnsafeMutablePointer<UInt8>?] = storage
        let converted: Int32 = outPlanes.withUnsafeMutableBufferPointer { out in
            if let frame, let data = frame.pointee.extended_data {
                return data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { inPlanes in
                    swr_convert(context, out.baseAddress, Int32(capacity), inPlanes, inCount)
                }
            }
            return swr_convert(context, out.baseAddress, Int32(capacity), nil, 0)
        }
        try check(converted, "\(operation): swr_convert")
        let count = Int(converted)
        let used = count * output.bytesPerFrameInPlane
        let planes = storage.map { Array(UnsafeBufferPointer(start: $0, count: used)) }
        return (planes, count)
    }
}
