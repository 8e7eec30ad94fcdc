import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Appends from several threads, by every path (blocking, async, appendIfReady), race an
/// encoder that fails at a known frame (fault injection): the failure reaches every caller
/// as the writer's error, nothing crashes or hangs, and what was written before stays
/// playable. Run under ThreadSanitizer (`make check-sanitizers`) it also checks that the
/// failure path and the append paths share no unguarded state.
final class EncoderFailureRaceTests: FileTestCase {
    /// The encoded frame (0-based) that fails.
    static let failingFrame = 30
    /// Appends each appender makes after it has seen the writer fail; every one must throw.
    static let appendsAfterFailure = 20

    func testAppendsRacingAFailingEncoderAllGetTheWritersError() async throws {
        let url = dir.appendingPathComponent("failing.mp4")
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        input.simulatedEncodeFailureAtFrame = EncoderFailureRaceTests.failingFrame
        // Slower than the appenders: the queue is full when the failure comes, so appenders
        // are waiting for room (blocked or suspended) at that moment.
        input.simulatedEncodeDelay = .milliseconds(2)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)

        let times = Counter()
        let record = RaceRecord()
        let finished = expectation(description: "every appender returns")
        finished.expectedFulfillmentCount = 5

        // Two blocking appenders and one appendIfReady appender on threads of their own.
        for (index, path) in [(0, "append"), (1, "append"), (2, "appendIfReady")] {
            let buffer = try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p)
            fill(buffer, seed: UInt64(index + 1))
            let thread = Thread {
                var tracker = AppenderTracker(path: path, writer: writer, record: record)
                while !tracker.done {
                    let failedBefore = writer.status == .failed
                    let time = MediaTime(value: Int64(times.next()), timescale: 30)
                    do throws(SwiftRecordError) {
                        if path == "append" {
                            try adaptor.append(buffer, withPresentationTime: time)
                        } else if try !adaptor.appendIfReady(buffer, withPresentationTime: time) {
                            usleep(200)  // not taken: the queue is full; try again shortly
                            continue
                        }
                        tracker.succeeded(failedBefore: failedBefore)
                    } catch {
                        tracker.threw(error, failedBefore: failedBefore)
                    }
                }
                finished.fulfill()
            }
            thread.start()
        }
        // Two async appenders.
        for index in 3..<5 {
            let buffer = try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p)
            fill(buffer, seed: UInt64(index + 1))
            Task.detached {
                var tracker = AppenderTracker(path: "async append", writer: writer, record: record)
                while !tracker.done {
                    let failedBefore = writer.status == .failed
                    let time = MediaTime(value: Int64(times.next()), timescale: 30)
                    do throws(SwiftRecordError) {
                        try await adaptor.append(buffer, withPresentationTime: time)
                        tracker.succeeded(failedBefore: failedBefore)
                    } catch {
                        tracker.threw(error, failedBefore: failedBefore)
                    }
                }
                finished.fulfill()
            }
        }
        await fulfillment(of: [finished], timeout: 60)

        for problem in record.problems { XCTFail(problem) }
        XCTAssertEqual(writer.status, .failed)
        let error = try XCTUnwrap(writer.error)
        XCTAssertEqual(error.kind, .ffmpeg)
        XCTAssertEqual(error.operation, "avcodec_send_frame(simulated)")
        XCTAssertEqual(error.message, "simulated encoder failure")
        XCTAssertGreaterThanOrEqual(record.accepted, EncoderFailureRaceTests.failingFrame + 1, "the failing frame was reached by appends")
        do {
            try await writer.finishWriting()
            XCTFail("finishWriting() must throw the writer's error")
        } catch {
            XCTAssertEqual(error.description, writer.error?.description)
        }
        XCTAssertEqual(writer.status, .failed)

        // What was written before the failure is a finished, playable file.
        let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", url.path, "-f", "null", "-"])
        XCTAssertTrue(decode.succeeded, "the file written before the failure decodes: \(decode.stderr)")
        let (stream, _) = try FF.probe(url.path)
        let frames = try XCTUnwrap(int(stream["nb_read_frames"]))
        XCTAssertGreaterThan(frames, 0, "frames encoded before the failure are in the file")
        XCTAssertLessThanOrEqual(frames, EncoderFailureRaceTests.failingFrame, "nothing from the failing frame on")
    }
}

extension EncoderFailureRaceTests {
    /// Several threads append at once (no fault injected): each time that is admitted must
    /// reach the encoder in the order admitted, so the writer completes and the file's
    /// timestamps increase. (A later time admitted by one thread must not overtake an earlier
    /// one admitted by another on the way to the writer's queue.)
    func testConcurrentAppendersReachTheEncoderInAdmissionOrder() async throws {
        let url = dir.appendingPathComponent("order.mp4")
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let times = Counter()
        let record = RaceRecord()
        let finished = expectation(description: "every appender returns")
        finished.expectedFulfillmentCount = 4
        for index in 0..<4 {
            let buffer = try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p)
            fill(buffer, seed: UInt64(index + 1))
            Thread {
                for _ in 0..<150 {
                    do throws(SwiftRecordError) {
                        try adaptor.append(buffer, withPresentationTime: MediaTime(value: Int64(times.next()), timescale: 30))
                        record.accept()
                    } catch where error.kind == .nonIncreasingTimestamp {
                        continue  // another thread's later time was admitted first: rejected, as documented
                    } catch {
                        record.problem("append: \(error)")
                        break
                    }
                }
                finished.fulfill()
            }.start()
        }
        await fulfillment(of: [finished], timeout: 60)
        for problem in record.problems { XCTFail(problem) }
        input.markAsFinished()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts", "-of", "csv=p=0", url.path])
        XCTAssertTrue(r.succeeded, r.stderr)
        // One line per frame: its pts, then side data on some (the first has the encoder's SEI).
        let pts = r.stdout.split(separator: "\n").compactMap { $0.split(separator: ",").first.flatMap { Int64($0) } }
        XCTAssertEqual(pts.count, record.accepted, "one decoded frame per accepted append")
        XCTAssertEqual(pts, pts.sorted(), "presentation times increase")
        XCTAssertEqual(Set(pts).count, pts.count, "no two frames share a time")
    }
}

/// What one appender saw, judged as it goes: before the failure an append is taken, or
/// rejected for a time another appender overtook (times are drawn before the appends
/// race), or gets the writer's error if the failure came meanwhile; once the appender has
/// seen the writer fail, every append must throw exactly the writer's error.
struct AppenderTracker {
    let path: String
    let writer: AssetWriter
    let record: RaceRecord
    private var afterFailure = 0
    private var attempts = 0

    init(path: String, writer: AssetWriter, record: RaceRecord) {
        self.path = path
        self.writer = writer
        self.record = record
    }

    var done: Bool { afterFailure >= EncoderFailureRaceTests.appendsAfterFailure || attempts >= 5_000 }

    mutating func succeeded(failedBefore: Bool) {
        attempts += 1
        record.accept()
        if failedBefore {
            afterFailure += 1
            record.problem("\(path): an append made after the writer failed was taken")
        }
        if attempts >= 5_000 { record.problem("\(path): the writer never failed in 5000 appends") }
    }

    mutating func threw(_ error: SwiftRecordError, failedBefore: Bool) {
        attempts += 1
        if !failedBefore && error.kind == .nonIncreasingTimestamp { return }
        let writerError = writer.error
        if error.description != writerError?.description {
            record.problem("\(path): threw \(error) \(failedBefore ? "after" : "before") the failure; the writer's error is \(writerError.map(\.description) ?? "none")")
        }
        // Only appends made after this appender saw the failure count towards the end.
        if failedBefore || writer.status == .failed { afterFailure += 1 }
    }
}

/// Shared by the appenders: frames taken, and anything that went wrong.
final class RaceRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = 0
    private var found: [String] = []
    func accept() { lock.withLock { taken += 1 } }
    func problem(_ text: String) { lock.withLock { if found.count < 20 { found.append(text) } } }
    var accepted: Int { lock.withLock { taken } }
    var problems: [String] { lock.withLock { found } }
}
