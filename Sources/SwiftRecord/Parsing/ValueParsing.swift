/// Parsers for the values people type on the command line (sizes, rates, bit rates,
/// durations, regions). Each throws a `SwiftRecordError` whose message says what was
/// wrong and what was expected, so the command line can show it as it is.
package enum ValueParsing {
    static func fail(_ what: String, _ text: String, expected: String) -> SwiftRecordError {
        SwiftRecordError(.invalidArgument, operation: what,
                         message: "'\(text)' is \(isNegativeNumber(text) ? "negative" : "not valid"); expected \(expected)")
    }

    /// Whether `text` reads as a negative number (`-5`, `-2.5`, `-5M`, `-1m30s`): worth
    /// saying so rather than only that it is not valid.
    package static func isNegativeNumber(_ text: String) -> Bool {
        let t = Array(text.trimmingCharactersInSet())
        guard t.count >= 2, t[0] == "-" else { return false }
        return t[1].isASCIIDigit || (t[1] == "." && t.count >= 3 && t[2].isASCIIDigit)
    }

    /// `1280x720`: both from 1 to 16384.
    package static func size(_ text: String) throws(SwiftRecordError) -> VideoSize {
        guard let s = VideoSize(parsing: text), s.width <= 16384, s.height <= 16384 else {
            throw fail("size", text, expected: "WIDTHxHEIGHT with whole numbers from 1 to 16384, such as 1280x720")
        }
        return s
    }

    /// `30`, `30000/1001`, `29.97`: greater than 0 and at most 1000.
    package static func frameRate(_ text: String) throws(SwiftRecordError) -> Rational {
        // From one frame a day (slower rates overflow the containers' time scales) to 1000.
        guard let r = Rational(parsing: text), r.numerator > 0, r.doubleValue <= 1000,
              Int64(r.numerator) * 86_400 >= Int64(r.denominator) else {
            throw fail("frame rate", text, expected: "a rate from 1/86400 (one frame a day) to 1000, such as 30, 60 or 30000/1001")
        }
        return r
    }

    /// `2M`, `2500k`, `2000000`, `1.5M` (bits per second; k = 1000).
    package static func bitRate(_ text: String) throws(SwiftRecordError) -> Int {
        let t = text.trimmingCharactersInSet()
        var digits = Substring(t)
        var multiplier = 1.0
        if let last = digits.last, !last.isASCIIDigit {
            switch last {
            case "k", "K": multiplier = 1e3
            case "m", "M": multiplier = 1e6
            case "g", "G": multiplier = 1e9
            default: throw fail("bit rate", text, expected: "bits per second such as 2M, 2500k or 2000000")
            }
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCIIDigit || $0 == "." }), digits.filter({ $0 == "." }).count <= 1,
              let value = Double(digits), value > 0 else {
            throw fail("bit rate", text, expected: "bits per second such as 2M, 2500k or 2000000")
        }
        let bps = value * multiplier
        guard bps >= 1000, bps <= 1e9 else {
            throw fail("bit rate", text, expected: "between 1k and 1000M bits per second")
        }
        return Int(bps.rounded())
    }

    /// `90`, `2.5`, `1m30s`, `1h`, `500ms`: positive (or zero when `allowsZero`), exact as
    /// written down to the nanosecond: `3.0001` is 30001/10000 s, never rounded to a
    /// millisecond (a time just past a file's end must not read as its end).
    package static func duration(_ text: String) throws(SwiftRecordError) -> MediaTime {
        try duration(text, allowsZero: false)
    }

    /// A duration that may also be zero (`--tolerance 0`, `--at 0`).
    package static func durationOrZero(_ text: String) throws(SwiftRecordError) -> MediaTime {
        try duration(text, allowsZero: true)
    }

    package static func duration(_ text: String, allowsZero: Bool) throws(SwiftRecordError) -> MediaTime {
        let expected = "seconds (90, 2.5) or hours, minutes and seconds (1h2m3s, 1m30s, 500ms)"
        let t = text.trimmingCharactersInSet().lowercased()
        // ASCII only: a digit with a combining mark ("5\u{301}") is one Character that
        // sorts among the digits but has no single numeric value.
        guard !t.isEmpty, t.allSatisfy(\.isASCII) else { throw fail("duration", text, expected: expected) }
        var nanoseconds: Int128 = 0
        var number = ""
        var sawUnit = false
        var chars = Array(t)
        if chars.allSatisfy({ $0.isASCIIDigit || $0 == "." }) { chars.append("s") }
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c.isASCIIDigit || c == "." {
                number.append(c)
                i += 1
                continue
            }
            var unit = String(c)
            if c == "m", i + 1 < chars.count, chars[i + 1] == "s" { unit = "ms"; i += 1 }
            i += 1
            let scale: Int128
            switch unit {
            case "h": scale = 3_600_000_000_000
            case "m": scale = 60_000_000_000
            case "s": scale = 1_000_000_000
            case "ms": scale = 1_000_000
            default: throw fail("duration", text, expected: expected)
            }
            guard let value = exactDecimal(number, times: scale) else { throw fail("duration", text, expected: expected) }
            nanoseconds += value
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit else { throw fail("duration", text, expected: expected) }
        // At most about 115 days (the longest recording any container here keeps exactly).
        guard nanoseconds < 10_000_000 * 1_000_000_000 else {
            throw SwiftRecordError(.invalidArgument, operation: "duration", message: "'\(text)' is too long; expected at most 10000000 seconds (about 115 days)")
        }
        guard nanoseconds > 0 || allowsZero else {
            throw SwiftRecordError(.invalidArgument, operation: "duration", message: "'\(text)' is zero; expected a duration greater than 0: \(expected)")
        }
        var value = nanoseconds, timescale: Int32 = 1_000_000_000
        while timescale > 1, value % 10 == 0 {
            value /= 10
            timescale /= 10
        }
        return MediaTime(value: Int64(value), timescale: timescale)
    }

    /// `digits` (`12`, `2.5`, `.25`) times `scale`, exactly; nil for anything else or for a
    /// fraction finer than one part in `scale`.
    private static func exactDecimal(_ digits: String, times scale: Int128) -> Int128? {
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, !digits.isEmpty, digits != ".",
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }), parts[0].count <= 12 else { return nil }
        var result = (Int128(parts[0]) ?? 0) * scale
        if parts.count == 2 {
            var unit = scale
            for d in parts[1] {
                guard unit % 10 == 0 else {
                    if d == "0" { continue }
                    return nil
                }
                unit /= 10
                guard let digit = d.wholeNumberValue else { return nil }
                result += Int128(digit) * unit
            }
        }
        return result
    }

    /// `x,y,w,h` in pixels: x and y ≥ 0, w and h ≥ 1.
    package static func region(_ text: String) throws(SwiftRecordError) -> PixelRegion {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharactersInSet()) }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3],
              x >= 0, y >= 0, w > 0, h > 0, w <= 16384, h <= 16384, x <= 65535, y <= 65535 else {
            throw fail("region", text, expected: "x,y,width,height in pixels, such as 100,50,640,360")
        }
        return PixelRegion(x: x, y: y, width: w, height: h)
    }
}

extension Substring {
    func trimmingCharactersInSet() -> String { String(self).trimmingCharactersInSet() }
}
