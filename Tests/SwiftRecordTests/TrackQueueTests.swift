import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

// TrackQueue: each track's one bounded queue between its input and the writing pipeline.
//  - testAFreedSlotWakesTheWatcherFromTheWritersThread: the slot the pipeline frees calls a
//    room watcher (the capture loop's pacer) itself, on the writer's thread, with no thread
//    parked in waitUntilReadyForMoreMediaData between them.
//  - testTheQueueNeverHoldsMoreThanItsDepth: appenders on four threads never get more than
//    queueDepth samples past the encoder: as many accepted as encoded + depth, at any time.
//  - testABlockedAppendWakesWhenTheWriterIsCancelled: an append blocked on a full queue
//    wakes with the writer's reason when the writer is cancelled.
//  - testAPictureWrittenWhileQueuedIsEncodedAsAppended: an appended picture is pinned, not
//    copied: the same buffer written again while its appends wait in the queue moves to new
//    storage, and the file (decoded by ffmpeg) shows each picture as it was appended.
//  - testPinsEndWithTheAppendsThatHeldThem: an append dropped outside the session, one
//    refused by a full queue, and queued ones let go by a cancel leave the buffer unshared.
final class TrackQueueTests: XCTestCase {
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
        input.whenReadyForMoreMediaData { closed in
            let onCaller = pthread_equal(pthread_self(), caller) != 0
            woken.withLockNotifying { $0 = (closed == nil, registered[\.self], onCaller) }
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

    /// Fills the luma plane with `value` and the chroma planes with 128.
    func paint(_ buffer: PixelBuffer, _ value: UInt8) {
        buffer.withWriteAccess { planes in
            for (i, p) in planes.enumerated() {
                p.baseAddress.initializeMemory(as: UInt8.self, repeating: i == 0 ? value : 128, count: p.bytesPerRow * p.height)
            }
        }
    }

    func testAPictureWrittenWhileQueuedIsEncodedAsAppended() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg is not installed")
        let (writer, input, pool) = try makeWriter("pinned.mp4", depth: 4, encodeDelay: .milliseconds(200))
        let picture = try pool.makePixelBuffer()
        let values: [UInt8] = [40, 200, 120, 80]
        for (n, v) in values.enumerated() {
            paint(picture, v)
            try await input.append(SampleBuffer(pixelBuffer: picture, presentationTimeStamp: MediaTime(value: Int64(n), timescale: 30)))
        }
        XCTAssertFalse(picture.isUniquelyReferenced, "the last append still holds the picture")
        try await writer.finishWriting()
        XCTAssertTrue(picture.isUniquelyReferenced, "every pin ended with its encode")
        XCTAssertEqual(picture.storage.withLock { $0.retired.count }, 0, "the frames moved away from were freed")
        let out = try makeTemporaryDirectory().appendingPathComponent("luma.gray").path
        // Each frame scaled to 2x2 yuv420p (no range conversion): 4 luma bytes, then U and V.
        try FF.ffmpeg(["-i", writer.outputURL.path, "-vf", "scale=2:2:flags=area", "-pix_fmt", "yuv420p", "-f", "rawvideo", out])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let means = stride(from: 0, to: bytes.count - 5, by: 6).map { UInt8(bytes[$0..<($0 + 4)].reduce(0) { $0 + Int($1) } / 4) }
        XCTAssertEqual(means.count, values.count)
        for (got, want) in zip(means, values) {
            XCTAssertLessThanOrEqual(abs(Int(got) - Int(want)), 3, "frames decode as appended: \(means) against \(values)")
        }
    }

    func testPinsEndWithTheAppendsThatHeldThem() throws {
        let (writer, input, pool) = try makeWriter("unpinned.mp4", depth: 2, encodeDelay: .milliseconds(500))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.endSession(atSourceTime: MediaTime(value: 10, timescale: 30))
        let dropped = try pool.makePixelBuffer()
        try adaptor.append(dropped, withPresentationTime: MediaTime(value: 20, timescale: 30))
        XCTAssertTrue(dropped.isUniquelyReferenced, "an append after the session's end is dropped and holds nothing")
        // The first is taken by the encoder (slowed), the second waits in the queue.
        let queued = try (0..<2).map { _ in try pool.makePixelBuffer() }
        for (n, buffer) in queued.enumerated() { try adaptor.append(buffer, withPresentationTime: MediaTime(value: Int64(n), timescale: 30)) }
        XCTAssertFalse(queued[1].isUniquelyReferenced)
        let refused = try pool.makePixelBuffer()
        XCTAssertFalse(try adaptor.appendIfReady(refused, withPresentationTime: MediaTime(value: 2, timescale: 30)), "the queue of depth 2 is full")
        XCTAssertTrue(refused.isUniquelyReferenced, "a refused append holds nothing")
        writer.cancelWriting()
        XCTAssertTrue(queued[0].isUniquelyReferenced, "the picture being encoded at the cancel is let go")
        XCTAssertTrue(queued[1].isUniquelyReferenced, "a cancel lets go of what was queued")
    }
}
