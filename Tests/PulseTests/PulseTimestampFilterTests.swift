@testable import SwiftRecordPulse
import XCTest

/// The filter alone, with made-up measurements.
final class PulseTimestampFilterTests: XCTestCase {
    let chunk = 480  // 10 ms at 48 kHz
    let ms: Int64 = 1_000_000

    func testJitterIsSmoothedAndTimesCountSamples() {
        var filter = PulseTimestampFilter(sampleRate: 48_000)
        var previous: Int64?
        for k in 0..<500 {
            let jitter = Int64((k * 7919) % 5 - 2) * ms  // ±2 ms
            let t = filter.timestamp(measured: 1_000 * ms + Int64(k) * 10 * ms + jitter, frames: chunk, gap: false)
            XCTAssertFalse(t.followsGap)
            if let previous {
                XCTAssertLessThanOrEqual(abs(t.nanoseconds - previous - 10 * ms), ms, "chunk \(k)")
            }
            previous = t.nanoseconds
        }
    }

    func testFollowsADriftingDevice() {
        var filter = PulseTimestampFilter(sampleRate: 48_000)
        var last: (measured: Int64, pts: Int64) = (0, 0)
        for k in 0..<6_000 {  // a minute; the device's clock 0.1 % slow: chunks arrive 10.01 ms apart
            let measured = Int64(k) * 10_010_000
            last = (measured, filter.timestamp(measured: measured, frames: chunk, gap: false).nanoseconds)
        }
        XCTAssertLessThan(abs(last.pts - last.measured), ms / 2, "60 ms of drift not followed")
    }

    func testAGapReanchorsAndAnEarlyMeasurementNeverGoesBack() {
        var filter = PulseTimestampFilter(sampleRate: 48_000)
        _ = filter.timestamp(measured: 0, frames: chunk, gap: false)
        let gap = filter.timestamp(measured: 500 * ms, frames: chunk, gap: true)
        XCTAssertEqual(gap.nanoseconds, 500 * ms)
        XCTAssertTrue(gap.followsGap)
        let unreported = filter.timestamp(measured: 700 * ms, frames: chunk, gap: false)
        XCTAssertEqual(unreported.nanoseconds, 700 * ms, "a jump past the threshold re-anchors")
        XCTAssertTrue(unreported.followsGap)
        let early = filter.timestamp(measured: 0, frames: chunk, gap: false)
        XCTAssertGreaterThanOrEqual(early.nanoseconds, 700 * ms + 9 * ms, "times never go back")
        XCTAssertFalse(early.followsGap)
    }
}
