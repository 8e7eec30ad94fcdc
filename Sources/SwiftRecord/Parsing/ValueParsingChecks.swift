/// Runs every value parser on `text` and checks what they accept against their documented
/// bounds. Used by the fuzz target and by the test that replays what the fuzzer found.
/// A violated bound traps on purpose: the fuzzer must see it as a crash.
package func exerciseValueParsers(_ text: String) {
    if let s = try? ValueParsing.size(text) {
        guard (1...16384).contains(s.width), (1...16384).contains(s.height) else { trap("size \(s)") }
    }
    if let r = try? ValueParsing.frameRate(text) {
        guard r.numerator > 0, r.denominator > 0, r.doubleValue <= 1000 else { trap("rate \(r)") }
    }
    if let b = try? ValueParsing.bitRate(text) {
        guard (1000...1_000_000_000).contains(b) else { trap("bit rate \(b)") }
    }
    if let d = try? ValueParsing.duration(text) {
        guard d.isNumeric, d > .zero else { trap("duration \(d)") }
    }
    if let r = try? ValueParsing.region(text) {
        guard r.x >= 0, r.y >= 0, r.width > 0, r.height > 0 else { trap("region \(r)") }
    }
    _ = Rational(parsing: text)
    _ = VideoSize(parsing: text)
}

private func trap(_ what: String) -> Never {
    // Reached only when a parser breaks its own contract: a bug to be found, not an input error.
    print("value parser contract violated: \(what)")
    abort()
}

#if canImport(Glibc)
import Glibc
#endif

/// Runs the YUV4MPEG2 header parser on `bytes` (up to the first newline) and checks what
/// it accepts. Used by the fuzz target and the regression replay test.
package func exerciseY4MHeaderParser(_ bytes: [UInt8]) {
    let line = bytes.prefix { $0 != 0x0A }
    _ = Y4MStreamHeader.hasSignature(bytes)
    guard let h = try? Y4MStreamHeader.parse(line: line, length: line.count + 1) else { return }
    guard h.width > 0, h.height > 0, h.width <= 16384, h.height <= 16384 else { trap("y4m size \(h.width)x\(h.height)") }
    if let r = h.frameRate, r.numerator <= 0 || r.denominator <= 0 { trap("y4m rate \(r)") }
    _ = h.pixelFormat.frameSize(width: h.width, height: h.height)
}
