/// A point or span on a media timeline: an integer `value` counted in units of
/// `1/timescale` seconds. Exact: no floating point is used inside, so adding,
/// comparing and rescaling never drift.
///
/// The counterpart of `CMTime` on Apple platforms.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The count of `1/timescale` second units.
    public let value: Int64
    /// Units per second; positive for a valid time.
    public let timescale: Int32

    /// Rounding used when a time is rescaled to a timescale that cannot hold it exactly.
    public enum Rounding: Sendable {
        /// To the nearest unit; halves away from zero.
        case toNearest
        /// Toward zero (truncation).
        case towardZero
        /// Toward negative infinity (floor).
        case down
        /// Toward positive infinity (ceiling).
        case up
    }

    /// A time of `value / timescale` seconds. A timescale ≤ 0 gives `.invalid`.
    public init(value: Int64, timescale: Int32) {
        if timescale <= 0 {
            self.value = 0
            self.timescale = 0
        } else {
            self.value = value
            self.timescale = timescale
        }
    }

    /// A whole number of seconds.
    public init(seconds: Int64) {
        self.init(value: seconds, timescale: 1)
    }

    /// The infinities: timescale 0 with value +1 or -1 (`.invalid` is timescale 0, value 0).
    private init(infinity sign: Int64) {
        value = sign
        timescale = 0
    }

    /// Zero seconds (`CMTime.zero`).
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// No time at all (`CMTime.invalid`); compares below every valid time.
    public static let invalid = MediaTime(value: 0, timescale: 0)
    /// Later than every numeric time (`CMTime.positiveInfinity`).
    public static let positiveInfinity = MediaTime(infinity: 1)
    /// Earlier than every numeric time (`CMTime.negativeInfinity`).
    public static let negativeInfinity = MediaTime(infinity: -1)

    /// True for a numeric time and for the infinities, as `CMTime.isValid`.
    public var isValid: Bool { timescale > 0 || value != 0 }
    /// True for a time with a value: valid and not infinite (`CMTime.isNumeric`).
    public var isNumeric: Bool { timescale > 0 }
    /// True for `positiveInfinity` (`CMTime.isPositiveInfinity`).
    public var isPositiveInfinity: Bool { timescale == 0 && value > 0 }
    /// True for `negativeInfinity` (`CMTime.isNegativeInfinity`).
    public var isNegativeInfinity: Bool { timescale == 0 && value < 0 }

    /// Seconds as a `Double`, for display and logging only (±infinity for the infinities,
    /// NaN when invalid).
    public var seconds: Double {
        if isNumeric { return Double(value) / Double(timescale) }
        return isPositiveInfinity ? .infinity : isNegativeInfinity ? -.infinity : .nan
    }

    /// The same instant in another timescale, rounded as asked when it is not exact
    /// (`CMTimeConvertScale`).
    public func convertScale(_ newTimescale: Int32, rounding: Rounding = .toNearest) -> MediaTime {
        guard isNumeric, newTimescale > 0 else { return newTimescale > 0 ? self : .invalid }
        if newTimescale == timescale { return self }
        let scaled = MediaTime.divide(Int128(value) * Int128(newTimescale), by: Int128(timescale), rounding: rounding)
        guard let v = Int64(exactly: scaled) else { return .invalid }
        return MediaTime(value: v, timescale: newTimescale)
    }

    /// True when this time is an exact multiple of `1/newTimescale`.
    public func isExactlyRepresentable(in newTimescale: Int32) -> Bool {
        guard isNumeric, newTimescale > 0 else { return false }
        return (Int128(value) * Int128(newTimescale)) % Int128(timescale) == 0
    }

    static func divide(_ n: Int128, by d: Int128, rounding: Rounding) -> Int128 {
        let q = n / d
        let r = n % d
        if r == 0 { return q }
        let negative = (n < 0) != (d < 0)
        switch rounding {
        case .towardZero:
            return q
        case .down:
            return negative ? q - 1 : q
        case .up:
            return negative ? q : q + 1
        case .toNearest:
            let twiceR = (r < 0 ? -r : r) * 2
            let absD = d < 0 ? -d : d
            if twiceR >= absD { return negative ? q - 1 : q + 1 }
            return q
        }
    }

    static func gcd(_ a: Int128, _ b: Int128) -> Int128 {
        var (a, b) = (a < 0 ? -a : a, b < 0 ? -b : b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// A timescale both can be expressed in exactly, or the larger one if that overflows.
    static func commonTimescale(_ a: Int32, _ b: Int32) -> Int32 {
        if a == b { return a }
        let l = Int128(a) / gcd(Int128(a), Int128(b)) * Int128(b)
        return Int32(exactly: l) ?? max(a, b)
    }

    /// The sum (`CMTimeAdd`): an infinity plus a numeric time is that infinity, the two
    /// infinities together are invalid, and so is a sum that overflows.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        guard lhs.isValid, rhs.isValid else { return .invalid }
        if !lhs.isNumeric || !rhs.isNumeric {
            if lhs.isNumeric { return rhs }
            if rhs.isNumeric { return lhs }
            return lhs.value == rhs.value ? lhs : .invalid
        }
        let ts = commonTimescale(lhs.timescale, rhs.timescale)
        let a = lhs.convertScale(ts), b = rhs.convertScale(ts)
        guard a.isValid, b.isValid else { return .invalid }
        let (sum, overflow) = a.value.addingReportingOverflow(b.value)
        return overflow ? .invalid : MediaTime(value: sum, timescale: ts)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + (-rhs)
    }

    /// The negation; the infinities swap.
    public static prefix func - (time: MediaTime) -> MediaTime {
        guard time.isNumeric else { return time.isValid ? MediaTime(infinity: -time.value) : .invalid }
        guard time.value != Int64.min else { return .invalid }
        return MediaTime(value: -time.value, timescale: time.timescale)
    }

    /// Multiplies by an integer (`CMTimeMultiply`).
    public static func * (lhs: MediaTime, rhs: Int64) -> MediaTime {
        guard lhs.isNumeric else {
            return lhs.isValid && rhs != 0 ? MediaTime(infinity: rhs > 0 ? lhs.value : -lhs.value) : .invalid
        }
        let (p, overflow) = lhs.value.multipliedReportingOverflow(by: rhs)
        return overflow ? .invalid : MediaTime(value: p, timescale: lhs.timescale)
    }

    /// Where a time sorts among the kinds: invalid, -infinity, numeric, +infinity.
    private var rank: Int { isNumeric ? 2 : isNegativeInfinity ? 1 : isPositiveInfinity ? 3 : 0 }

    /// Exact comparison by cross-multiplication (`CMTimeCompare`). Invalid sorts first,
    /// then negative infinity, the numeric times, positive infinity.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        guard lhs.isNumeric, rhs.isNumeric else { return lhs.rank < rhs.rank }
        return Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    /// Equal when they name the same instant: 1/2 == 2/4.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        guard lhs.isNumeric, rhs.isNumeric else { return lhs.rank == rhs.rank }
        return Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        guard isNumeric else { hasher.combine(Int8(rank)); return }
        let g = MediaTime.gcd(Int128(value), Int128(timescale))
        let divisor = g == 0 ? 1 : g
        hasher.combine(Int64(truncatingIfNeeded: Int128(value) / divisor))
        hasher.combine(Int64(truncatingIfNeeded: Int128(timescale) / divisor))
    }

    public var description: String {
        guard isNumeric else {
            return isPositiveInfinity ? "MediaTime.positiveInfinity" : isNegativeInfinity ? "MediaTime.negativeInfinity" : "MediaTime.invalid"
        }
        let whole = value / Int64(timescale)
        let rest = abs(value % Int64(timescale))
        let micro = Int64(MediaTime.divide(Int128(rest) * 1_000_000, by: Int128(timescale), rounding: .towardZero))
        let sign = (value < 0 && whole == 0) ? "-" : ""
        let frac = String(micro).leftPadded(to: 6)
        return "\(value)/\(timescale) (\(sign)\(whole).\(frac) s)"
    }
}

/// A frame rate or other ratio of two integers, kept exact (30000/1001 stays 30000/1001).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    /// The numerator; its sign is the ratio's.
    public let numerator: Int32
    /// The denominator, always positive.
    public let denominator: Int32

    /// A ratio with a positive denominator, or nil for `n/0`.
    public init?(_ numerator: Int32, _ denominator: Int32 = 1) {
        guard denominator != 0 else { return nil }
        if denominator < 0 {
            guard numerator != Int32.min, denominator != Int32.min else { return nil }
            self.numerator = -numerator
            self.denominator = -denominator
        } else {
            self.numerator = numerator
            self.denominator = denominator
        }
    }

    /// Parses `30`, `30000/1001`, `29.97` or `23.976` (decimals become exact fractions).
    public init?(parsing text: String) {
        let t = text.trimmingCharactersInSet()
        if let slash = t.firstIndex(of: "/") {
            guard let n = Int32(t[..<slash]), let d = Int32(t[t.index(after: slash)...]) else { return nil }
            self.init(n, d)
        } else if let dot = t.firstIndex(of: ".") {
            let intPart = t[..<dot], fracPart = t[t.index(after: dot)...]
            guard !fracPart.isEmpty, fracPart.count <= 6, fracPart.allSatisfy(\.isASCIIDigit),
                  intPart.allSatisfy(\.isASCIIDigit),
                  let whole = Int64(intPart.isEmpty ? "0" : String(intPart)), let frac = Int64(fracPart) else { return nil }
            var den: Int64 = 1
            for _ in 0..<fracPart.count { den *= 10 }
            // Overflow-checked: the whole part can be up to 19 digits long.
            let (scaled, o1) = whole.multipliedReportingOverflow(by: den)
            let (num, o2) = scaled.addingReportingOverflow(frac)
            guard !o1, !o2, num <= Int64(Int32.max) * 1001 else { return nil }
            // 29.97 and 23.976 are the NTSC rates, which are really n*1000/1001.
            for base: Int64 in [24, 30, 60, 120] {
                let ntsc = base * 1000 * den, approx = num * 1001
                if abs(ntsc - approx) * 1000 < approx { self.init(Int32(base * 1000), 1001); return }
            }
            let g = Int64(MediaTime.gcd(Int128(num), Int128(den)))
            guard g != 0, let n = Int32(exactly: num / g), let d = Int32(exactly: den / g) else { return nil }
            self.init(n, d)
        } else {
            guard let n = Int32(t) else { return nil }
            self.init(n, 1)
        }
    }

    /// The ratio as a `Double`, for display and arithmetic that need not be exact.
    public var doubleValue: Double { Double(numerator) / Double(denominator) }
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
    func trimmingCharactersInSet() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension MediaTime {
    /// This time in ticks of `timeBase` (seconds per tick), rounded to the nearest; nil if
    /// invalid or out of range.
    func ticks(in timeBase: Rational) -> Int64? {
        guard isNumeric, timeBase.numerator > 0 else { return nil }
        let n = Int128(value) * Int128(timeBase.denominator)
        let d = Int128(timescale) * Int128(timeBase.numerator)
        return Int64(exactly: MediaTime.divide(n, by: d, rounding: .toNearest))
    }
}

extension Rational {
    /// `ticks` of this time base in ticks of `other`, rounded to the nearest, halves away
    /// from zero: what FFmpeg's `av_rescale_q` (and so the muxer's `av_packet_rescale_ts`) gives.
    func rescale(_ ticks: Int64, to other: Rational) -> Int64 {
        let n = Int128(ticks) * Int128(numerator) * Int128(other.denominator)
        let d = Int128(denominator) * Int128(other.numerator)
        guard d != 0 else { return ticks }
        let q = MediaTime.divide(n, by: d, rounding: .toNearest)
        return Int64(clamping: q)
    }
}
