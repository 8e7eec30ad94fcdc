import Foundation
import SwiftRecord
import XCTest

/// A clock the test moves by hand (nanoseconds).
final class FakeClock: HostClock, @unchecked Sendable {
    private let lock = NSLock()
    private var ns: Int64

    init(startingAt seconds: Int64 = 1000) { ns = seconds * 1_000_000_000 }

    func now() -> MediaTime { lock.withLock { MediaTime(value: ns, timescale: 1_000_000_000) } }
    func set(nanoseconds: Int64) { lock.withLock { ns = nanoseconds } }
    func advance(milliseconds: Double) { lock.withLock { ns += Int64((milliseconds * 1e6).rounded()) } }
    var nanoseconds: Int64 { lock.withLock { ns } }
}

/// A small deterministic random generator (xorshift), so jitter is the same on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

final class SessionTimelineTests: XCTestCase {
    let fps30 = Rational(30)!
    let tickNs: Int64 = 33_333_333

    /// Collects the output frames and drops of a run.
    struct Run {
        var frames: [SessionTimeline.Frame] = []
        var drops: [SessionTimeline.DropReason] = []
        var pauses: [(MediaTime, Int64)] = []
        var resumes: [(MediaTime, Int64)] = []

        mutating func take(_ events: [SessionTimeline.Event]) {
            for e in events {
                switch e {
                case .frame(let f): frames.append(f)
                case .dropped(_, let r): drops.append(r)
                case .paused(let t, let n): pauses.append((t, n))
                case .resumed(let t, let n): resumes.append((t, n))
                }
            }
        }
    }

    /// Every output frame is on the grid, in order, once: index i at i / rate.
    func assertContiguousGrid(_ frames: [SessionTimeline.Frame], rate: Rational, file: StaticString = #filePath, line: UInt = #line) {
        for (i, f) in frames.enumerated() {
            XCTAssertEqual(f.index, Int64(i), "frame \(i) out of order", file: file, line: line)
            XCTAssertEqual(f.presentationTime, MediaTime(value: Int64(i) * Int64(rate.denominator), timescale: rate.numerator),
                           file: file, line: line)
        }
    }

    func testPicturesOnTheTicksAreEachShownOnce() {
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        XCTAssertEqual(t.nextTickTime, clock.now())
        for _ in 0..<90 {
            run.take(t.frameArrived(at: clock.now()))
            clock.advance(milliseconds: 1000.0 / 30)
            run.take(t.advance(to: clock.now()))
        }
        XCTAssertEqual(run.frames.count, 90)
        XCTAssertTrue(run.frames.allSatisfy { $0.source == .captured })
        XCTAssertTrue(run.drops.isEmpty)
        assertContiguousGrid(run.frames, rate: fps30)
        XCTAssertEqual(t.counts.captured, 90)
        XCTAssertEqual(t.counts.repeated, 0)
    }

    func testJitteredArrivalGivesOneFramePerTick() {
        // Pictures at 30 fps with up to ±12 ms of jitter each (a busy machine's wake-ups).
        let clock = FakeClock()
        var random = SeededRandom(state: 0x5EED)
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        let start = clock.nanoseconds
        t.start(at: clock.now())
        var arrivals = 0
        for k in 0..<300 {
            let jitter = Int64.random(in: -12_000_000...12_000_000, using: &random)
            let at = start + Int64(k) * tickNs + (k == 0 ? 0 : jitter)
            clock.set(nanoseconds: max(at, clock.nanoseconds))
            run.take(t.advance(to: clock.now()))
            run.take(t.frameArrived(at: clock.now()))
            arrivals += 1
        }
        run.take(t.stop(at: clock.now()))
        assertContiguousGrid(run.frames, rate: fps30)
        // Each picture is shown or dropped, each tick has exactly one frame.
        XCTAssertEqual(Int64(arrivals), t.counts.captured + t.counts.droppedFasterThanFrameRate)
        XCTAssertEqual(Int64(run.frames.count), t.counts.captured + t.counts.repeated)
        XCTAssertEqual(t.counts.repeated, t.counts.droppedFasterThanFrameRate, "a picture pushed into the next tick leaves one tick to repeat")
        XCTAssertGreaterThanOrEqual(run.frames.count, 298)
        // A captured picture lies within half a tick of its frame's time.
        for f in run.frames where f.source == .captured {
            let offset = f.captureTime.convertScale(1_000_000_000).value - start - (f.index * 1_000_000_000 / 30)
            XCTAssertLessThanOrEqual(abs(offset), tickNs / 2 + 1, "frame \(f.index)")
        }
        // With ±12 ms jitter (less than half a tick) nothing needs to be dropped or repeated.
        XCTAssertEqual(t.counts.repeated, 0)
    }

    func testHeavyJitterDropsAndRepeatsButKeepsTheGrid() {
        // ±30 ms of jitter: pictures land in neighbouring ticks.
        let clock = FakeClock()
        var random = SeededRandom(state: 42)
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        let start = clock.nanoseconds
        t.start(at: clock.now())
        var times: [Int64] = (0..<300).map { k in start + Int64(k) * tickNs + (k == 0 ? 0 : Int64.random(in: -30_000_000...30_000_000, using: &random)) }
        times.sort()
        for at in times {
            clock.set(nanoseconds: at)
            run.take(t.advance(to: clock.now()))
            run.take(t.frameArrived(at: clock.now()))
        }
        assertContiguousGrid(run.frames, rate: fps30)
        XCTAssertGreaterThan(t.counts.repeated, 0)
        XCTAssertGreaterThan(t.counts.droppedFasterThanFrameRate, 0)
        XCTAssertEqual(300, t.counts.captured + t.counts.droppedFasterThanFrameRate)
        XCTAssertEqual(Int64(run.frames.count), t.counts.captured + t.counts.repeated)
        // A repeat shows the picture before it.
        for (i, f) in run.frames.enumerated() where f.source == .repeated {
            XCTAssertEqual(f.captureTime, run.frames[i - 1].captureTime)
        }
    }

    func testBurstsKeepTheFirstPictureOfEachTickAndRepeatBetweenThem() {
        // Bursts of 5 pictures 1 ms apart, one burst every 100 ms (every third tick), for 2 s.
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        let start = clock.nanoseconds
        t.start(at: clock.now())
        for burst in 0..<20 {
            for i in 0..<5 {
                clock.set(nanoseconds: start + Int64(burst) * 100_000_000 + Int64(i) * 1_000_000)
                run.take(t.advance(to: clock.now()))
                run.take(t.frameArrived(at: clock.now()))
            }
            // Ticks in between pass with no picture.
            for tick in 1...2 {
                clock.set(nanoseconds: start + Int64(burst * 3 + tick) * tickNs + 5_000_000)
                run.take(t.advance(to: clock.now()))
            }
        }
        assertContiguousGrid(run.frames, rate: fps30)
        XCTAssertEqual(t.counts.captured, 20)
        XCTAssertEqual(t.counts.droppedFasterThanFrameRate, 80)
        XCTAssertEqual(run.drops.filter { $0 == .fasterThanFrameRate }.count, 80)
        // The first picture of a burst is shown; the ticks up to the next burst repeat it.
        for (i, f) in run.frames.enumerated() {
            XCTAssertEqual(f.source, i % 3 == 0 ? .captured : .repeated, "frame \(i)")
            if i % 3 == 0 {
                XCTAssertEqual(f.captureTime.convertScale(1_000_000_000).value, start + Int64(i / 3) * 100_000_000)
            }
        }
        XCTAssertEqual(t.counts.repeated, Int64(run.frames.count) - 20)
    }

    func testSlowSourceRepeatsOnTheTicksItMisses() {
        // A 15 fps source in a 30 fps recording: every other tick repeats.
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        for _ in 0..<30 {
            run.take(t.frameArrived(at: clock.now()))
            clock.advance(milliseconds: 1000.0 / 15)
            run.take(t.advance(to: clock.now()))
        }
        assertContiguousGrid(run.frames, rate: fps30)
        XCTAssertEqual(t.counts.captured, 30)
        // One between each two pictures, and one after the last as the clock moved on.
        XCTAssertEqual(t.counts.repeated, 30)
        XCTAssertEqual(run.frames.map(\.source).prefix(4), [.captured, .repeated, .captured, .repeated])
    }

    func testNothingIsRepeatedBeforeTheFirstPictureWhichIsFrameZero() {
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        clock.advance(milliseconds: 250)
        run.take(t.advance(to: clock.now()))
        XCTAssertTrue(run.frames.isEmpty)
        run.take(t.frameArrived(at: clock.now()))
        XCTAssertEqual(run.frames.map(\.index), [0])
        // The grid now runs from that picture: the next tick is one frame later.
        XCTAssertEqual(t.nextTickTime?.convertScale(1_000_000_000).value, clock.nanoseconds + 33_333_334, "rounded up to the nanosecond")
        clock.advance(milliseconds: 1000.0 / 30)
        run.take(t.frameArrived(at: clock.now()))
        XCTAssertEqual(run.frames.map(\.index), [0, 1])
        XCTAssertTrue(run.frames.allSatisfy { $0.source == .captured })
    }

    func testPauseJoinsTheSegmentsWithoutAGap() {
        // 3 s recording, 2 s paused (pictures keep coming and are dropped), 2 s more.
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        func record(seconds: Int) {
            for _ in 0..<(seconds * 30) {
                run.take(t.advance(to: clock.now()))
                run.take(t.frameArrived(at: clock.now()))
                clock.advance(milliseconds: 1000.0 / 30)
            }
        }
        record(seconds: 3)
        let pausedAt = clock.now()
        run.take(t.pause(at: pausedAt))
        XCTAssertEqual(t.state, .paused)
        XCTAssertNil(t.nextTickTime)
        record(seconds: 2)
        XCTAssertEqual(run.drops.count, 60)
        XCTAssertTrue(run.drops.allSatisfy { $0 == .paused })
        run.take(t.resume(at: clock.now()))
        record(seconds: 2)
        run.take(t.stop(at: clock.now()))

        assertContiguousGrid(run.frames, rate: fps30)
        XCTAssertEqual(run.frames.count, 150, "5 s of frames at 30 fps")
        XCTAssertEqual(t.counts.repeated, 0)
        XCTAssertEqual(t.counts.pauses, 1)
        XCTAssertEqual(t.counts.pausedNanoseconds, 2_000_000_000, accuracy: 2_000)
        XCTAssertEqual(run.pauses.map(\.1), [90])
        XCTAssertEqual(run.resumes.map(\.1), [90])
        XCTAssertEqual(run.pauses.first?.0, pausedAt)
        // The first picture after the pause is frame 90, taken 2 s after frame 89's.
        let gap = run.frames[90].captureTime - run.frames[89].captureTime
        XCTAssertEqual(gap.seconds, 2.0 + 1.0 / 30, accuracy: 0.002)
    }

    func testPauseBeforeAnyPictureAndRepeatedToggles() {
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        for _ in 0..<3 {
            run.take(t.pause(at: clock.now()))
            clock.advance(milliseconds: 500)
            run.take(t.resume(at: clock.now()))
            clock.advance(milliseconds: 10)
        }
        // Pausing twice or resuming while running changes nothing.
        XCTAssertTrue(t.resume(at: clock.now()).isEmpty)
        run.take(t.frameArrived(at: clock.now()))
        XCTAssertEqual(run.frames.map(\.index), [0])
        XCTAssertEqual(t.counts.pauses, 3)
        XCTAssertEqual(t.counts.pausedNanoseconds, 1_500_000_000)
    }

    func testStopRepeatsUpToTheStopAndRefusesLaterPictures() {
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        run.take(t.frameArrived(at: clock.now()))
        // The source stalls for 100 ms, then the recording stops.
        clock.advance(milliseconds: 100)
        run.take(t.stop(at: clock.now()))
        XCTAssertEqual(run.frames.map(\.source), [.captured, .repeated, .repeated])
        XCTAssertEqual(t.state, .stopped)
        run.take(t.frameArrived(at: clock.now()))
        XCTAssertEqual(run.drops, [.notRunning])
        XCTAssertEqual(run.frames.count, 3)
    }

    func testPicturesBeforeStartAreRefused() {
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        run.take(t.frameArrived(at: clock.now()))
        t.start(at: clock.now() + MediaTime(seconds: 1))
        run.take(t.frameArrived(at: clock.now()))
        XCTAssertEqual(run.drops, [.notRunning, .notRunning])
        XCTAssertEqual(t.counts.droppedNotRunning, 2)
    }

    func testNTSCRateStaysExactOverAnHour() {
        // 29.97 fps for an hour, pictures on the ticks rounded to the nanosecond: no drift.
        let rate = Rational(30000, 1001)!
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: rate)
        let start = clock.nanoseconds
        t.start(at: clock.now())
        let frames: Int64 = 107_892 // one hour
        var last: SessionTimeline.Frame?
        for k in 0..<frames {
            let at = start + (k * 1001 * 1_000_000_000 + 15_000) / 30_000
            clock.set(nanoseconds: at)
            for e in t.frameArrived(at: clock.now()) {
                if case .frame(let f) = e { last = f } else { XCTFail("unexpected \(e) at \(k)"); return }
            }
        }
        XCTAssertEqual(t.counts.captured, frames)
        XCTAssertEqual(t.counts.repeated, 0)
        XCTAssertEqual(last?.presentationTime, MediaTime(value: (frames - 1) * 1001, timescale: 30000))
        XCTAssertEqual(t.nextTickTime?.convertScale(1_000_000_000).value,
                       start + (frames * 1001 * 1_000_000_000 + 29_999) / 30_000)
    }

    func testTicksAreCentredSoWakeUpJitterNeverShiftsAPicture() {
        // A puller that wakes exactly at each nextTickTime, or up to just under half a tick late.
        let clock = FakeClock()
        var t = SessionTimeline(frameRate: fps30)
        var run = Run()
        t.start(at: clock.now())
        for k in 0..<60 {
            guard let due = t.nextTickTime else { return XCTFail("not running") }
            let late = k % 2 == 0 ? 0 : tickNs / 2 - 1
            clock.set(nanoseconds: due.convertScale(1_000_000_000).value + late)
            run.take(t.advance(to: clock.now()))
            run.take(t.frameArrived(at: clock.now()))
        }
        XCTAssertEqual(run.frames.count, 60)
        XCTAssertTrue(run.frames.allSatisfy { $0.source == .captured })
        assertContiguousGrid(run.frames, rate: fps30)
    }
}
