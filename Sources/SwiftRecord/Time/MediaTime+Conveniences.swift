extension MediaTime {
    /// The time nearest to `seconds` in `preferredTimescale` (`CMTime(seconds:preferredTimescale:)`,
    /// `CMTimeMakeWithSeconds`): for times from a `Double` clock, such as a host clock's
    /// seconds since boot. NaN gives `.invalid`, ±infinity and values too large for the
    /// timescale the infinities, a timescale ≤ 0 `.invalid`.
    public init(seconds: Double, preferredTimescale: Int32) {
        guard preferredTimescale > 0, !seconds.isNaN else {
            self = .invalid
            return
        }
        let scaled = (seconds * Double(preferredTimescale)).rounded()
        // 2^63 is exactly representable; anything at or beyond it does not fit an Int64.
        guard scaled.isFinite, abs(scaled) < 9_223_372_036_854_775_808.0 else {
            self = seconds > 0 ? .positiveInfinity : .negativeInfinity
            return
        }
        self.init(value: Int64(scaled), timescale: preferredTimescale)
    }

    /// The time divided by an integer, in the same timescale, rounded to the nearest
    /// unit (`CMTimeMultiplyByRatio(time, 1, divisor)`). Dividing by zero gives `.invalid`.
    public static func / (lhs: MediaTime, rhs: Int64) -> MediaTime {
        lhs.multiplied(by: 1, dividedBy: rhs)
    }

    /// The time times `multiplier / divisor`, exact where the timescale allows and
    /// rounded to the nearest unit otherwise (`CMTimeMultiplyByRatio`). The infinities
    /// keep (or swap) their sign; a zero divisor, or a result out of range, is `.invalid`.
    public func multiplied(by multiplier: Int64, dividedBy divisor: Int64) -> MediaTime {
        guard divisor != 0 else { return .invalid }
        guard isNumeric else {
            guard isValid, multiplier != 0 else { return .invalid }
            return (multiplier > 0) == (divisor > 0) ? self : -self
        }
        let q = MediaTime.divide(Int128(value) * Int128(multiplier), by: Int128(divisor), rounding: .toNearest)
        guard let v = Int64(exactly: q) else { return .invalid }
        return MediaTime(value: v, timescale: timescale)
    }

    /// The time times a ratio such as a frame rate's reciprocal (`CMTimeMultiplyByRatio`).
    public func multiplied(by ratio: Rational) -> MediaTime {
        multiplied(by: Int64(ratio.numerator), dividedBy: Int64(ratio.denominator))
    }

    /// How many times `rhs` fits in `lhs`, as a `Double` (`CMTimeGetSeconds(a) / CMTimeGetSeconds(b)`,
    /// computed exactly before the one rounding to `Double`); NaN when either is not numeric or `rhs` is zero.
    public static func / (lhs: MediaTime, rhs: MediaTime) -> Double {
        guard lhs.isNumeric, rhs.isNumeric, rhs.value != 0 else { return .nan }
        return Double(Int128(lhs.value) * Int128(rhs.timescale)) / Double(Int128(rhs.value) * Int128(lhs.timescale))
    }
}

/// A span of time: a start and a duration (`CMTimeRange`). The range holds the times
/// from `start` up to, not including, `end`.
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    /// The first time in the range (`CMTimeRange.start`).
    public var start: MediaTime
    /// How long the range lasts (`CMTimeRange.duration`); +infinity for an unending range.
    public var duration: MediaTime

    /// A range from `start` lasting `duration` (`CMTimeRange(start:duration:)`).
    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// The range from `start` up to `end` (`CMTimeRange(start:end:)`).
    public init(start: MediaTime, end: MediaTime) {
        self.init(start: start, duration: end - start)
    }

    /// The empty range at zero (`CMTimeRange.zero`).
    public static let zero = TimeRange(start: .zero, duration: .zero)
    /// No range (`CMTimeRange.invalid`).
    public static let invalid = TimeRange(start: .invalid, duration: .invalid)

    /// Where the range ends: `start + duration` (`CMTimeRange.end`); +infinity for an unending range.
    public var end: MediaTime { start + duration }

    /// A numeric start and a non-negative duration (which may be +infinity).
    public var isValid: Bool {
        start.isNumeric && duration.isValid && !duration.isNegativeInfinity && duration >= .zero
    }

    /// Valid and zero long (`CMTimeRange.isEmpty`).
    public var isEmpty: Bool { isValid && duration == .zero }

    /// Whether `time` is in the range: `start ≤ time < end` (`CMTimeRangeContainsTime`).
    public func containsTime(_ time: MediaTime) -> Bool {
        isValid && time.isValid && start <= time && time < end
    }

    /// Whether every time of `other` is in this range (`CMTimeRangeContainsTimeRange`).
    public func containsTimeRange(_ other: TimeRange) -> Bool {
        isValid && other.isValid && start <= other.start && other.end <= end
    }

    /// The times both ranges hold (`CMTimeRangeGetIntersection`); an empty range when they
    /// do not meet, `.invalid` when either is invalid.
    public func intersection(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid else { return .invalid }
        let s = max(start, other.start), e = min(end, other.end)
        return e > s ? TimeRange(start: s, end: e) : TimeRange(start: s, duration: .zero)
    }

    /// The smallest range holding both (`CMTimeRangeGetUnion`).
    public func union(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid else { return .invalid }
        return TimeRange(start: min(start, other.start), end: max(end, other.end))
    }

    public var description: String {
        isValid ? "[\(start) ..< \(end))" : "TimeRange.invalid"
    }
}

extension MediaTime {
    /// Seconds for messages: to the millisecond, or as fine as the time is (`3.0001`, never
    /// `3.000` for a time just past three seconds).
    package var secondsText: String {
        guard timescale > 0 else { return "?" }
        for digits in [3, 6, 9] {
            let scale = (0..<digits).reduce(Int128(1)) { p, _ in p * 10 }
            if Int128(value) * scale % Int128(timescale) == 0 {
                return String(format: "%.\(digits)f", seconds)
            }
        }
        return String(format: "%.9f", seconds)
    }
}
