internal import CFFmpeg

/// Time bases between FFmpeg's `AVRational` and `Rational`, for the folders that own C
/// objects: the others (Pipeline/, Writer/, Timeline/) see only `Rational`.
extension Rational {
    /// FFmpeg's time base as a ratio (a codec's or a stream's: its denominator is
    /// positive); 1/1000000 for an invalid one (x/0), which no opened codec or stream has.
    init(_ timeBase: AVRational) {
        self = Rational(timeBase.num, timeBase.den) ?? Rational(1, 1_000_000)!
    }

    /// The ratio as FFmpeg's.
    var avRational: AVRational { AVRational(num: numerator, den: denominator) }
}

extension FormatDescription {
    /// `timeBase`, the unit of the samples' ticks (a valid one: `init` refuses others).
    var sampleTimeBase: Rational { Rational(timeBase) }
}
