import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class WriterErrorTests: FileTestCase {

    let small = VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast")

    func assertKind<T>(_ kind: SwiftRecordError.Kind, _ expr: @autoclosure () throws -> T, contains text: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expr(), file: file, line: line) { e in
            guard let e = e as? SwiftRecordError else { return XCTFail("not a SwiftRecordError: \(e)", file: file, line: line) }
            XCTAssertEqual(e.kind, kind, "\(e)", file: file, line: line)
            if let text { XCTAssertTrue(e.description.contains(text), "\(e) should mention \(text)", file: file, line: line) }
        }
    }

    func makeWriter(_ name: String = "e.mp4") throws -> (AssetWriter, AssetWriterInput, PixelBufferAdaptor) {
        let w = try AssetWriter(outputURL: dir.appendingPathComponent(name))
        let i = AssetWriterInput(outputSettings: small)
        let a = PixelBufferAdaptor(assetWriterInput: i)
        try w.add(i)
        return (w, i, a)
    }

    /// As `AVAssetWriter`: a file already at the URL fails `startWriting()`
    /// (`.fileAlreadyExists`) and is left exactly as it was.
    func testAnExistingFileIsRefusedAndUntouched() throws {
        let url = dir.appendingPathComponent("e.mp4")
        let old = Data("not ours".utf8)
        try old.write(to: url)
        let (w, _, _) = try makeWriter()
        assertKind(.fileAlreadyExists, try w.startWriting(), contains: "overwritesExistingFile")
        XCTAssertEqual(w.status, .failed)
        XCTAssertEqual(w.error?.kind, .fileAlreadyExists)
        XCTAssertEqual(try Data(contentsOf: url), old)
    }

    /// With `overwritesExistingFile`, the old file is replaced only by a complete new one:
    /// a writer that fails or is cancelled leaves it as it was.
    func testReplacingHappensOnlyOnSuccess() async throws {
        let url = dir.appendingPathComponent("e.mp4")
        let old = Data("not ours".utf8)
        for outcome in ["cancel", "fail", "finish"] {
            try old.write(to: url)
            let (w, i, a) = try makeWriter()
            w.overwritesExistingFile = true
            if outcome == "fail" { i.simulatedEncodeFailureAtFrame = 5 }
            try w.startWriting()
            try w.startSession(atSourceTime: .zero)
            let pool = try XCTUnwrap(a.pixelBufferPool)
            for n in 0..<10 {
                let b = try pool.makePixelBuffer()
                fill(b, value: UInt8(n * 20))
                do { try await a.append(b, withPresentationTime: MediaTime(value: Int64(n), timescale: 30)) } catch { break }
            }
            switch outcome {
            case "cancel":
                w.cancelWriting()
                XCTAssertEqual(try Data(contentsOf: url), old, "cancel")
                XCTAssertNil(w.partialFileURL)
            case "fail":
                i.markAsFinished()
                do { try await w.finishWriting() } catch {}
                XCTAssertEqual(w.status, .failed)
                XCTAssertEqual(try Data(contentsOf: url), old, "failure")
                let partial = try XCTUnwrap(w.partialFileURL, "the failed writer's partial file")
                XCTAssertTrue(partial.lastPathComponent.hasPrefix("e.partial-"), partial.path)
                // What the encoder had given back before the failure (its delay varies with threads).
                let kept = try XCTUnwrap(int(try FF.probe(partial.path).stream["nb_read_frames"]))
                XCTAssertTrue((1...5).contains(kept), "\(kept) frames kept")
                try FileManager.default.removeItem(at: partial)
            default:
                i.markAsFinished()
                try await w.finishWriting()
                XCTAssertEqual(int(try FF.probe(url.path).stream["nb_read_frames"]), 10)
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["e.mp4"], outcome)
        }
    }

    func testAppendBeforeStartWriting() throws {
        let (w, i, _) = try makeWriter()
        let b = try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p)
        assertKind(.invalidState, try i.append(SampleBuffer(pixelBuffer: b, presentationTimeStamp: .zero)), contains: "startWriting")
        XCTAssertEqual(w.status, .unknown)
        try w.startWriting()
        assertKind(.invalidState, try i.append(SampleBuffer(pixelBuffer: b, presentationTimeStamp: .zero)), contains: "startSession")
        XCTAssertEqual(w.status, .writing)
        w.cancelWriting()
        XCTAssertEqual(w.status, .cancelled)
    }

    func testAppendAfterMarkAsFinishedAndAfterFinish() async throws {
        let (w, i, a) = try makeWriter()
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        let b = try XCTUnwrap(a.pixelBufferPool).makePixelBuffer()
        try syncAppend(a, b, .zero)
        i.markAsFinished()
        assertKind(.invalidState, try syncAppend(a, b, MediaTime(value: 1, timescale: 30)), contains: "finished")
        try await w.finishWriting()
        XCTAssertEqual(w.status, .completed)
        assertKind(.invalidState, try syncAppend(a, b, MediaTime(value: 2, timescale: 30)), contains: "completed")
        do {
            try await w.finishWriting()
            XCTFail("finishing twice must throw")
        } catch {
            XCTAssertEqual(error.kind, .invalidState)
        }
        XCTAssertEqual(w.status, .completed)
    }

    func testWrongSizeOrFormat() throws {
        let (w, _, a) = try makeWriter()
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        // As Apple's adaptor does, a buffer of another size or format is converted, not refused
        // (AppleAdaptorConversionTests checks the pictures).
        try syncAppend(a, try PixelBuffer(width: 32, height: 64, pixelFormat: .yuv420p), .zero)
        try syncAppend(a, try PixelBuffer(width: 64, height: 64, pixelFormat: .bgra), MediaTime(value: 1, timescale: 30))
        XCTAssertEqual(w.status, .writing)
        w.cancelWriting()
    }

    func testNonIncreasingAndDuplicateTimestamps() async throws {
        let (w, _, a) = try makeWriter()
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        let pool = try XCTUnwrap(a.pixelBufferPool)
        try syncAppend(a, try pool.makePixelBuffer(), MediaTime(value: 2, timescale: 30))
        assertKind(.nonIncreasingTimestamp, try syncAppend(a, try pool.makePixelBuffer(), MediaTime(value: 2, timescale: 30)))
        assertKind(.nonIncreasingTimestamp, try syncAppend(a, try pool.makePixelBuffer(), MediaTime(value: 1, timescale: 30)))
        assertKind(.invalidArgument, try syncAppend(a, try pool.makePixelBuffer(), .invalid))
        try syncAppend(a, try pool.makePixelBuffer(), MediaTime(value: 3, timescale: 30))
        try await w.finishWriting()
        XCTAssertEqual(w.status, .completed)
    }

    func testUnsupportedCodecForContainerAndUnknownOption() throws {
        let w = try AssetWriter(outputURL: dir.appendingPathComponent("x.webm"))
        let i = AssetWriterInput(outputSettings: VideoSettings(codec: .h264, width: 64, height: 64))
        XCTAssertFalse(w.canAdd(i))
        assertKind(.unsupported, try w.add(i), contains: ".mp4")
        assertKind(.unsupported, try AssetWriter(outputURL: dir.appendingPathComponent("x.avi")), contains: ".mkv")

        let w2 = try AssetWriter(outputURL: dir.appendingPathComponent("y.mp4"))
        var s = small
        s.encoderOptions = ["no-such-option": "1"]
        try w2.add(AssetWriterInput(outputSettings: s))
        assertKind(.invalidArgument, try w2.startWriting(), contains: "no-such-option")
        XCTAssertEqual(w2.status, .failed)
        XCTAssertNotNil(w2.error)

        let w3 = try AssetWriter(outputURL: dir.appendingPathComponent("z.mp4"))
        try w3.add(AssetWriterInput(outputSettings: VideoSettings(width: 63, height: 64)))
        assertKind(.invalidArgument, try w3.startWriting(), contains: "even")
        XCTAssertEqual(w3.status, .failed)
    }

    func testUnwritablePath() throws {
        let w = try AssetWriter(outputURL: URL(fileURLWithPath: "/nonexistent-dir/out.mp4"))
        try w.add(AssetWriterInput(outputSettings: small))
        assertKind(.io, try w.startWriting(), contains: "/nonexistent-dir/out.mp4")
        XCTAssertEqual(w.status, .failed)
        XCTAssertEqual(w.error?.kind, .io)
    }

    func testCancelRemovesPartialFile() throws {
        let (w, _, a) = try makeWriter("cancel.mp4")
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        try syncAppend(a, try XCTUnwrap(a.pixelBufferPool).makePixelBuffer(), .zero)
        XCTAssertTrue(FileManager.default.fileExists(atPath: w.outputURL.path))
        w.cancelWriting()
        XCTAssertEqual(w.status, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: w.outputURL.path))
        assertKind(.invalidState, try syncAppend(a, try PixelBuffer(width: 64, height: 64, pixelFormat: .yuv420p), MediaTime(value: 1, timescale: 30)))
    }

    func testCancelWhileAppendingFromAnotherTask() async throws {
        let (w, _, a) = try makeWriter("race.mp4")
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        let pool = try XCTUnwrap(a.pixelBufferPool)
        let appender = Task {
            var n = 0
            do {
                for i in 0..<10_000 {
                    try await a.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
                    n += 1
                }
            } catch {
                return (n, error as? SwiftRecordError)
            }
            return (n, nil)
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        w.cancelWriting()
        let (n, error) = await appender.value
        XCTAssertLessThan(n, 10_000)
        XCTAssertEqual(error?.kind, .invalidState)
        XCTAssertEqual(w.status, .cancelled)
    }

    func testRequestMediaDataWhenReady() async throws {
        let (w, i, a) = try makeWriter("pull.mp4")
        try w.startWriting()
        try w.startSession(atSourceTime: .zero)
        let queue = DispatchQueue(label: "test.pull")
        let counter = Counter()
        let pool = try XCTUnwrap(a.pixelBufferPool)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            i.requestMediaDataWhenReady(on: queue) {
                while i.isReadyForMoreMediaData {
                    let n = counter.next()
                    if n >= 90 { i.markAsFinished(); done.resume(); return }
                    guard let b = try? pool.makePixelBuffer() else { return }
                    try? a.append(b, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                }
            }
        }
        try await w.finishWriting()
        let (s, _) = try FF.probe(w.outputURL.path)
        XCTAssertEqual(int(s["nb_read_frames"]), 90)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; let v = n; n += 1; return v }
}
