import Dispatch
import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// `requestMediaDataWhenReady(on:using:)` with Apple's documented semantics: the block is
/// called again while the input is ready, whether or not it appended last time, and when
/// the encoder frees a slot in the full queue (no polling); it stops once the input is
/// marked finished.
final class RequestMediaDataTests: XCTestCase {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var calls = 0
        private var appended = 0
        private var finished = false
        func call() -> Int { lock.lock(); defer { lock.unlock() }; calls += 1; return calls }
        func append() -> Int { lock.lock(); defer { lock.unlock() }; appended += 1; return appended }
        var snapshot: (calls: Int, appended: Int) { lock.lock(); defer { lock.unlock() }; return (calls, appended) }
        func finishOnce() -> Bool { lock.lock(); defer { lock.unlock() }; if finished { return false }; finished = true; return true }

        /// What a block does while the input is ready: appends the next of `frames` pictures
        /// (one a frame at 30 fps), and after the last marks the input finished and resumes `done` once.
        func appendWhileReady(to input: AssetWriterInput, through adaptor: PixelBufferAdaptor, from pool: PixelBufferPool,
                              frames: Int, done: CheckedContinuation<Void, Never>) {
            while input.isReadyForMoreMediaData {
                let n = snapshot.appended
                if n >= frames {
                    input.markAsFinished()
                    if finishOnce() { done.resume() }
                    return
                }
                guard let b = try? pool.makePixelBuffer() else { return }
                try? adaptor.append(b, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                _ = append()
            }
        }
    }

    func makeWriter(_ name: String) throws -> (AssetWriter, AssetWriterInput, PixelBufferAdaptor) {
        let dir = try makeTemporaryDirectory()
        let writer = try AssetWriter(outputURL: dir.appendingPathComponent(name))
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        input.expectsMediaDataInRealTime = true
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        return (writer, input, adaptor)
    }

    /// The case: a block that returns without appending (its frame is not ready
    /// yet) while the input is ready is called again, and the frames it appends later arrive.
    func testBlockThatAppendedNothingIsCalledAgain() async throws {
        let (writer, input, adaptor) = try makeWriter("later.mp4")
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        let log = Log()
        let start = DispatchTime.now()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            input.requestMediaDataWhenReady(on: DispatchQueue(label: "test.later")) {
                _ = log.call()
                // No data for the first 200 ms (a camera still starting), then 30 frames.
                guard DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds > 200_000_000 else { return }
                log.appendWhileReady(to: input, through: adaptor, from: pool, frames: 30, done: done)
            }
        }
        let (calls, appended) = log.snapshot
        XCTAssertEqual(appended, 30)
        XCTAssertGreaterThan(calls, 2, "called again after returning without appending")
        try await writer.finishWriting()
        let (stream, _) = try FF.probe(writer.outputURL.path)
        XCTAssertEqual(int(stream["nb_read_frames"]), 30)
        // Marked finished: no more calls.
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(log.snapshot.calls, calls)
    }

    /// A block with nothing to give is called again while the input is ready, paced (1 ms
    /// growing to 10 ms: about 100 calls a second, not a spinning core), and never once the
    /// input is marked finished.
    func testIdleBlockIsCalledWithoutSpinning() async throws {
        let (writer, input, _) = try makeWriter("idle.mp4")
        let log = Log()
        input.requestMediaDataWhenReady(on: DispatchQueue(label: "test.idle")) { _ = log.call() }
        try await Task.sleep(nanoseconds: 500_000_000)
        let calls = log.snapshot.calls
        XCTAssertGreaterThanOrEqual(calls, 5, "called again while ready")
        XCTAssertLessThan(calls, 500, "\(calls) calls in 0.5 s: spinning")
        XCTAssertTrue(input.isReadyForMoreMediaData)
        input.markAsFinished()
        try await Task.sleep(nanoseconds: 50_000_000)
        let after = log.snapshot.calls
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertEqual(log.snapshot.calls, after, "no calls once finished")
        writer.cancelWriting()
    }

    /// With a slow encoder, each call after a full queue comes with room: the block is
    /// called when the encoder frees a slot (the queue's waiter), not by polling — no call
    /// finds the input not ready.
    func testBlockIsCalledOnlyWithRoom() async throws {
        let (writer, input, adaptor) = try makeWriter("room.mp4")
        input.simulatedEncodeDelay = .milliseconds(30)
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        let log = Log()
        let notReady = Locked(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            input.requestMediaDataWhenReady(on: DispatchQueue(label: "test.room")) {
                _ = log.call()
                if !input.isReadyForMoreMediaData { notReady.withLock { $0 += 1 } }
                log.appendWhileReady(to: input, through: adaptor, from: pool, frames: 15, done: done)
            }
        }
        XCTAssertEqual(notReady[\.self], 0, "every call came with room")
        // Each call but the last appends at least one frame: none is a call for nothing.
        XCTAssertLessThanOrEqual(log.snapshot.calls, 16, "at most one call per frame appended, and the last")
        try await writer.finishWriting()
        let (stream, _) = try FF.probe(writer.outputURL.path)
        XCTAssertEqual(int(stream["nb_read_frames"]), 15)
    }

    /// A block that fills the queue is called again once there is room, at once.
    func testBlockThatFillsTheQueueIsCalledWhenRoomReturns() async throws {
        let (writer, input, adaptor) = try makeWriter("fill.mp4")
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        let log = Log()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            input.requestMediaDataWhenReady(on: DispatchQueue(label: "test.fill")) {
                _ = log.call()
                log.appendWhileReady(to: input, through: adaptor, from: pool, frames: 60, done: done)
            }
        }
        XCTAssertEqual(log.snapshot.appended, 60)
        XCTAssertGreaterThan(log.snapshot.calls, 1, "called again once the full queue had room")
        try await writer.finishWriting()
        let (stream, _) = try FF.probe(writer.outputURL.path)
        XCTAssertEqual(int(stream["nb_read_frames"]), 60)
    }
}
