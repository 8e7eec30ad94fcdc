/// Runs every value parser on `text` (the options' names and choices included) and checks what they accept against their documented
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
    if let m = try? ValueParsing.choice(text, among: FuzzCorner.allCases, option: "--choice", what: "a corner", ignoringCase: true) {
        guard m.rawValue == text.lowercased() else { trap("choice \(m) for \(text)") }
    }
    if let n = try? ValueParsing.byteSize(text, option: "--bytes") {
        guard (1...ValueParsing.largestByteSize).contains(n) else { trap("byte size \(n)") }
    }
    if let s = try? ValueParsing.sourceStall(text) {
        guard s.frame >= 0, (0...ValueParsing.longestStallMilliseconds).contains(s.milliseconds) else { trap("stall \(s)") }
    }
    if let o = try? ValueParsing.overlay(text, corners: FuzzCorner.self) {
        guard o.size.width >= 2, o.size.height >= 2, o.size.width % 2 == 0, o.size.height % 2 == 0, o.margin >= 0 else { trap("overlay \(o)") }
    }
    if let a = try? ValueParsing.audioChoice(text) {
        if let title = a.title, title.isEmpty { trap("audio title empty") }
        if let skew = a.clockSkew, !(abs(skew) < 0.1) { trap("audio skew \(skew)") }
    }
    _ = Rational(parsing: text)
    _ = VideoSize(parsing: text)
}

/// The corners `--overlay` takes (`PictureOverlay.Corner`'s names: that type is not in the
/// fuzzers' build, which compiles the parsers without FFmpeg).
private enum FuzzCorner: String, CaseIterable {
    case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
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
