@testable import SwiftRecord
import XCTest

final class MediaTimeTests: XCTestCase {
    func testArithmeticIsExact() {
        let a = MediaTime(value: 1, timescale: 3)
        let b = MediaTime(value: 1, timescale: 6)
        XCTAssertEqual(a + b, MediaTime(value: 1, timescale: 2))
        XCTAssertEqual((a + b).timescale, 6)
        XCTAssertEqual(a - b, b)
        XCTAssertEqual(MediaTime(value: 1001, timescale: 30000) * 30000, MediaTime(seconds: 1001))
        // 0.1 added ten times is exactly one second (it would not be with Double).
        var t = MediaTime.zero
        for _ in 0..<10 { t = t + MediaTime(value: 1, timescale: 10) }
        XCTAssertEqual(t, MediaTime(seconds: 1))
    }

    func testComparisonAndHashing() {
        XCTAssertEqual(MediaTime(value: 1, timescale: 2), MediaTime(value: 2, timescale: 4))
        XCTAssertEqual(Set([MediaTime(value: 1, timescale: 2), MediaTime(value: 3, timescale: 6)]).count, 1)
        XCTAssertGreaterThan(MediaTime(value: 1001, timescale: 30000), MediaTime(value: 1, timescale: 30))
        XCTAssertLessThan(MediaTime.invalid, MediaTime(value: -5, timescale: 1))
        XCTAssertFalse(MediaTime(value: 5, timescale: 0).isValid)
        // Cross-multiplication that would overflow 64 bits still compares right.
        XCTAssertLessThan(MediaTime(value: Int64.max - 1, timescale: Int32.max), MediaTime(value: Int64.max, timescale: Int32.max))
    }

    func testRescaling() {
        let t = MediaTime(value: 1001, timescale: 30000)
        XCTAssertEqual(t.convertScale(90000).value, 3003)
        XCTAssertTrue(t.isExactlyRepresentable(in: 90000))
        XCTAssertFalse(t.isExactlyRepresentable(in: 1000))
        XCTAssertEqual(t.convertScale(1000).value, 33)
        XCTAssertEqual(t.convertScale(1000, rounding: .up).value, 34)
        XCTAssertEqual(MediaTime(value: -1, timescale: 3).convertScale(2, rounding: .toNearest).value, -1)
        XCTAssertEqual(MediaTime(value: -1, timescale: 3).convertScale(2, rounding: .towardZero).value, 0)
        XCTAssertEqual(MediaTime(value: -1, timescale: 3).convertScale(2, rounding: .down).value, -1)
        XCTAssertFalse(MediaTime(value: Int64.max, timescale: 1).convertScale(1000).isValid)
    }

    func testDescriptionAndRational() {
        XCTAssertEqual(MediaTime(value: 3, timescale: 2).description, "3/2 (1.500000 s)")
        XCTAssertEqual(MediaTime.invalid.description, "MediaTime.invalid")
        XCTAssertEqual(Rational(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "29.97"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "25"), Rational(25, 1))
        XCTAssertEqual(Rational(parsing: "12.5"), Rational(25, 2))
        XCTAssertNil(Rational(parsing: "1/0"))
        XCTAssertNil(Rational(parsing: "fast"))
    }

    /// The writer predicts the container's ticks as the muxer computes them
    /// (av_packet_rescale_ts: av_rescale_q, nearest, halves away from zero), without FFmpeg.
    func testRescaleRoundsAsFFmpegDoes() throws {
        let tb = { (n: Int32, d: Int32) in Rational(n, d)! }
        XCTAssertEqual(tb(1, 30).rescale(1, to: tb(1, 1000)), 33)
        XCTAssertEqual(tb(1, 60).rescale(1, to: tb(1, 1000)), 17)
        XCTAssertEqual(tb(1, 30).rescale(7, to: tb(1, 90000)), 21000)
        XCTAssertEqual(tb(1001, 30000).rescale(3, to: tb(1, 1000)), 100)
        XCTAssertEqual(tb(1, 2000).rescale(1, to: tb(1, 1000)), 1, "a half goes away from zero")
        XCTAssertEqual(tb(1, 2000).rescale(-1, to: tb(1, 1000)), -1, "a half goes away from zero")
        XCTAssertEqual(tb(1, 2000).rescale(3, to: tb(1, 1000)), 2)
        XCTAssertEqual(MediaTime(value: 1, timescale: 60).ticks(in: tb(1, 30)), 1, "a half tick rounds up")
        XCTAssertNil(MediaTime.invalid.ticks(in: tb(1, 30)))
    }
}
