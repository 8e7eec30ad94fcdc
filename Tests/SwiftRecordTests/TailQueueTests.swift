import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

// TailQueue: each track's one bounded queue between its input and the writing pipeline.
//  - testAFreedSlotWakesTheWatcherFromTheWritersThread: the slot the pipeline frees calls a
//    room watcher (the capture loop's pacer) itself, on the writer's thread, with no thread
//    parked in waitUntilReadyForMoreMediaData between them.
//  - testTheQueueNeverHoldsMoreThanItsDepth: appenders on four threads never get more than
//    queueDepth samples past the encoder: as many accepted as encoded + depth, at any time.
//  - testABlockedAppendWakesWhenTheWriterIsCancelled: an append blocked on a full queue
//    wakes with the writer's reason when the writer is cancelled.
final class TailQueueTests: XCTestCase {
    func makeWriter(_ name: String, depth: Int, encodeDelay: Duration) throws -> (AssetWriter, AssetWriterInput, PixelBufferPool) {
        let writer = try AssetWriter(outputURL: try makeTemporaryDirectory().appendingPathComponent(name))
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast", threads: 1))
        input.queueDepth = depth
        input.simulatedEncodeDelay = encodeDelay
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let pool = try PixelBufferPool(width: 64, height: 64, pixelFormat: .yuv420p, maximumBufferCount: depth + 2)
        return (writer, input, pool)
    }

    func testAFreedSlotWakesTheWatcherFromTheWritersThread() async throws {
        let (writer, input, pool) = try makeWriter("watch.mp4", depth: 2, encodeDelay: .milliseconds(1000))
        let picture = try pool.makePixelBuffer()
        var n: Int64 = 0
        while try PixelBufferAdaptor(assetWriterInput: input).appendIfReady(picture, withPresentationTime: MediaTime(value: n, timescale: 30)) { n += 1 }
        XCTAssertEqual(n, 2, "a queue of depth 2 takes two samples before it is full")
        // Nothing else runs: no thread waits for room; the pipeline's freed slot calls back.
        let caller = pthread_self()
        let woken = Locked<(ready: Bool, registered: Bool, onCaller: Bool)?>(nil)
        let registered = Locked(false)
        input.whenReadyForMoreMediaData { ready in
            let onCaller = pthread_equal(pthread_self(), caller) != 0
            woken.withLockNotifying { $0 = (ready, registered[\.self], onCaller) }
        }
        registered.withLock { $0 = true }
        let result = woken.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 10_000_000_000) { $0 }
        XCTAssertEqual(result?.ready, true)
        XCTAssertEqual(result?.registered, true, "called when the slot freed, not at once: the queue was full")
        XCTAssertEqual(result?.onCaller, false, "called from the pipeline's thread")
        try await writer.finishWriting()
    }

    func testTheQueueNeverHoldsMoreThanItsDepth() async throws {
        let depth = 3
        let (writer, input, pool) = try makeWriter("depth.mp4", depth: depth, encodeDelay: .milliseconds(5))
        let picture = try pool.makePixelBuffer()
        let next = Locked<Int64>(0)
        let worst = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<15 {
                // Times taken and appended under one lock, so they increase; the wait for room is the input's.
                next.withLock { n in
                    try? input.append(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: MediaTime(value: n, timescale: 30)))
                    n += 1
                    let inFlight = input.appendedSampleCount - input.encodedSampleCount
                    worst.withLock { $0 = max($0, inFlight) }
                }
            }
        }
        try await writer.finishWriting()
        XCTAssertEqual(input.appendedSampleCount, 60)
        // Not yet encoded: what the queue holds, and the one frame x264 keeps back.
        XCTAssertLessThanOrEqual(worst[\.self], depth + 1, "samples accepted and not yet encoded")
    }

    func testABlockedAppendWakesWhenTheWriterIsCancelled() throws {
        let (writer, input, pool) = try makeWriter("cancel.mp4", depth: 1, encodeDelay: .milliseconds(300))
        let picture = try pool.makePixelBuffer()
        try input.append(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: .zero))
        let outcome = Locked<SwiftRecordError??>(nil)
        let thread = Thread {
            do {
                for n in 1..<10 { try input.append(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: MediaTime(value: Int64(n), timescale: 30))) }
                outcome.withLockNotifying { $0 = .some(nil) }
            } catch let error as SwiftRecordError {
                outcome.withLockNotifying { $0 = .some(error) }
            } catch {
                outcome.withLockNotifying { $0 = .some(nil) }
            }
        }
        thread.start()
        usleep(50_000)
        writer.cancelWriting()
        let result = outcome.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 10_000_000_000) { $0 }
        let error = try XCTUnwrap(result ?? nil ?? nil, "the blocked append ended with an error")
        XCTAssertTrue(error.message.contains("cancelled"), error.message)
    }
}
