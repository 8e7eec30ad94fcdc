import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// `CaptureSource.frames()`: the live capture loop's scheduler as an async sequence, over
/// the synthetic scene running in real time (50 fps), wrapped to count its grabs and stops.
final class CaptureFramesTests: MediaTestCase {
    /// The synthetic scene, counting `nextFrame` and `stop` calls.
    final class CountingSource: CaptureSource {
        let base: SyntheticSource
        let counts = Locked((grabs: 0, stops: 0, starts: 0))
        init(realtime: Bool = true) throws {
            base = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 160, height: 120), frameRate: Rational(50)!, realtime: realtime))
        }
        var identifier: String { "counting" }
        var nativeSize: VideoSize { base.nativeSize }
        var pixelFormat: PixelFormat { base.pixelFormat }
        var nativeFrameRate: Rational? { nil }
        var isLive: Bool { base.isLive }
        func start() throws { counts.withLock { $0.starts += 1 } }
        func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
            counts.withLock { $0.grabs += 1 }
            return try base.nextFrame(from: pool)
        }
        func stop() { counts.withLock { $0.stops += 1 } }
    }

    func testDeliversPicturesInOrderAndStopsTheSourceAfterABreak() async throws {
        let source = try CountingSource()
        var indices: [Int] = []
        var times: [MediaTime] = []
        for try await frame in source.frames(frameRate: Rational(50)!) {
            indices.append(frame.index)
            times.append(frame.captureTime)
            if indices.count == 12 { break }
        }
        XCTAssertEqual(indices.count, 12)
        XCTAssertEqual(indices, indices.sorted(), "in order: \(indices)")
        XCTAssertEqual(Set(indices).count, 12, "no picture twice: \(indices)")
        XCTAssertTrue(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "capture times rise")
        // The capture thread ends within a tick of the loop's end, stopping the source.
        try await waitUntil(seconds: 1) { source.counts.withLock { $0.stops } == 1 }
        XCTAssertEqual(source.counts.withLock { $0.starts }, 1)
    }

    func testCancellationEndsTheLoopWithin100Milliseconds() async throws {
        let source = try CountingSource()
        let seen = Locked(0)
        let task = Task {
            for try await _ in source.frames(frameRate: Rational(50)!) { seen.withLock { $0 += 1 } }
        }
        try await waitUntil(seconds: 5) { seen.withLock { $0 } >= 5 }
        let cancelled = MonotonicClock.nanoseconds()
        task.cancel()
        _ = await task.result
        let loopEnded = Double(MonotonicClock.nanoseconds() - cancelled) / 1e6
        try await waitUntil(seconds: 1) { source.counts.withLock { $0.stops } == 1 }
        let stopped = Double(MonotonicClock.nanoseconds() - cancelled) / 1e6
        print("CaptureFramesTests: loop ended \(loopEnded) ms, source stopped \(stopped) ms after the cancellation")
        XCTAssertLessThan(loopEnded, 100)
        XCTAssertLessThan(stopped, 100)
        let grabs = source.counts.withLock { $0.grabs }
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(source.counts.withLock { $0.grabs }, grabs, "no grab after the stop")
    }

    /// A consumer taking 100 ms per picture at 50 fps: the grabs keep the frame rate, the
    /// two newest pictures wait, the rest are dropped and counted.
    func testASlowConsumerNeverHoldsTheGrab() async throws {
        let source = try CountingSource()
        let frames = source.frames(frameRate: Rational(50)!, bufferingNewest: 2)
        let start = MonotonicClock.nanoseconds()
        var indices: [Int] = []
        for try await frame in frames {
            indices.append(frame.index)
            try await Task.sleep(for: .milliseconds(100))
            if indices.count == 6 { break }
        }
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        let grabs = source.counts.withLock { $0.grabs }
        print("CaptureFramesTests: \(grabs) grabs in \(seconds) s, \(frames.droppedCount) dropped, delivered \(indices)")
        XCTAssertEqual(indices, indices.sorted())
        XCTAssertGreaterThan(frames.droppedCount, 5)
        // 50 per second less a generous margin for a loaded machine; a grab waiting for the
        // consumer would make about 10 per second.
        XCTAssertGreaterThan(Double(grabs), seconds * 25)
    }

    /// An offline source is pulled as the consumer asks: every picture, none dropped.
    func testAnOfflineSourceGivesEveryPicture() async throws {
        let source = try CountingSource(realtime: false)
        let frames = source.frames()
        var indices: [Int] = []
        for try await frame in frames {
            indices.append(frame.index)
            if indices.count == 20 { break }
        }
        XCTAssertEqual(indices, Array(0..<20))
        XCTAssertEqual(frames.droppedCount, 0)
    }

    /// `AudioCaptureSource.sounds()` over the real-time synthetic tone (10 ms chunks): in
    /// order, a slow consumer's drops counted, a cancelled loop ending at once.
    func testSoundsComeInOrderDropBehindASlowConsumerAndEndOnCancellation() async throws {
        var options = AudioSourceOptions()
        options.realtime = true
        let tone = try SyntheticAudioSource(options: options)
        let sounds = tone.sounds(bufferingNewest: 2)
        var times: [MediaTime] = []
        for try await chunk in sounds {
            times.append(chunk.samples.presentationTimeStamp)
            if times.count > 3 { try await Task.sleep(for: .milliseconds(50)) }
            if times.count == 8 { break }
        }
        XCTAssertTrue(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "in order: \(times)")
        XCTAssertGreaterThan(sounds.droppedCount, 5, "about 4 chunks a 50 ms wait, 2 kept")

        let again = try SyntheticAudioSource(options: options)
        let seen = Locked(0)
        let task = Task { for try await _ in again.sounds() { seen.withLock { $0 += 1 } } }
        try await waitUntil(seconds: 5) { seen.withLock { $0 } >= 3 }
        let cancelled = MonotonicClock.nanoseconds()
        task.cancel()
        _ = await task.result
        let ms = Double(MonotonicClock.nanoseconds() - cancelled) / 1e6
        print("CaptureFramesTests: the sound loop ended \(ms) ms after the cancellation")
        XCTAssertLessThan(ms, 100)
    }

    private func waitUntil(seconds: Double, _ condition: @Sendable () -> Bool) async throws {
        let end = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
        while !condition() {
            guard MonotonicClock.nanoseconds() < end else { throw TestError.failed("not within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
