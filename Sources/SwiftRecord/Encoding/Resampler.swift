internal import CFFmpeg

/// The one owner of a libswresample context (`SwrContext`): made and initialised in
/// `init`, freed in `deinit`. An audio lane converts a source's PCM with one (always
/// resampling, so drift compensation can start at any time); a mix sums its lanes with one
/// whose matrix is given. Not `Sendable`: used on the writing pipeline's thread.
final class Resampler {
    let context: OpaquePointer

    /// Converts `input` (layout, format, rate) to `output`. `matrix` (row per output channel,
    /// `stride` apart, a column per input channel) replaces the channel mixing libswresample
    /// would choose; `alwaysResample` keeps the resampler in the path at equal rates.
    /// (The layouts are read, not kept: libswresample copies them.)
    init(output: (layout: AVChannelLayout, format: AVSampleFormat, rate: Int32),
         input: (layout: AVChannelLayout, format: AVSampleFormat, rate: Int32),
         matrix: (values: [Double], stride: Int32)? = nil, alwaysResample: Bool = false, hint: String) throws(SwiftRecordError) {
        var swr: OpaquePointer?
        var outLayout = output.layout, inLayout = input.layout
        try check(swr_alloc_set_opts2(&swr, &outLayout, output.format, output.rate, &inLayout, input.format, input.rate, 0, nil),
                  "swr_alloc_set_opts2")
        if alwaysResample { av_opt_set_int(UnsafeMutableRawPointer(swr), "flags", Int64(sr_swr_flag_resample()), 0) }
        var status: Int32 = 0
        if let matrix { status = swr_set_matrix(swr, matrix.values, matrix.stride) }
        if status >= 0 { status = swr_init(swr) }
        guard status >= 0, let made = swr else {
            swr_free(&swr)
            throw ffmpegError(min(status, -1), "swr_init", hint: hint)
        }
        context = made
    }

    deinit {
        var swr: OpaquePointer? = context
        swr_free(&swr)
    }
}
