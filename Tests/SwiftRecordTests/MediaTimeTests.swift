import SwiftRecord
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
}
