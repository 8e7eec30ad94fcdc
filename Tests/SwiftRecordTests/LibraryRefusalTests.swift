import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// Round 3 ("Nothing lost"), library cases:
/// - testBufferLockedForWritingIsRefusedWhenConverted: a buffer locked with lockBaseAddress() is refused by every adaptor append, also when the adaptor converts it.
/// - testFinishingWithNoSamplesFailsAndLeavesNoFile: finishWriting() with nothing appended fails (.failed, "no samples") and removes only the file it created.
/// - testFinishingWithNoSamplesKeepsTheFileItWasToReplace: the same when overwriting: the existing file stays as it was.
/// - testFFmpegCodesAreShownAsText: an error carrying an FFmpeg code shows av_strerror's text (AVERROR_EXIT: "Immediate exit requested"), not only the number.
/// - testLosslessWithAProfileThatCannotCodeIt: qp 0 with H.264 high is refused upfront naming high444; high444 writes a lossless file.
/// - testPictureBeyondLibavcodecsLimit: 16384x16384 is refused upfront, naming the limit; the largest square (16254) is accepted by the check.
final class LibraryRefusalTests: XCTestCase {

    func testBufferLockedForWritingIsRefusedWhenConverted() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("locked.mp4")
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input,
                                         sourcePixelBufferAttributes: PixelBufferAttributes(width: 64, height: 64, pixelFormat: .bgra))
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let buffer = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
        XCTAssertEqual(buffer.pixelFormat, .bgra, "the adaptor converts BGRA to the encoder's yuv420p")
        try buffer.lockBaseAddress()
        func assertRefused(_ error: Error?, _ how: String) {
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidState, "\(how): \(String(describing: error))")
            XCTAssertTrue("\(String(describing: error))".contains("locked for writing"), "\(how): \(String(describing: error))")
        }
        XCTAssertThrowsError(try syncAppend(adaptor, buffer, .zero)) { assertRefused($0, "append") }
        XCTAssertThrowsError(try adaptor.appendIfReady(buffer, withPresentationTime: .zero)) { assertRefused($0, "appendIfReady") }
        do {
            try await adaptor.append(buffer, withPresentationTime: .zero)
            XCTFail("async append took a buffer locked for writing")
        } catch { assertRefused(error, "async append") }
        // A read-only lock is fine, and the refusals did not end the writer.
        try buffer.unlockBaseAddress()
        try buffer.lockBaseAddress(.readOnly)
        try syncAppend(adaptor, buffer, .zero)
        try buffer.unlockBaseAddress(.readOnly)
        input.markAsFinished()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        XCTAssertEqual(int(try FF.probe(url.path).stream["nb_read_frames"]), 1, "exactly the one unlocked append")
    }

    func testFinishingWithNoSamplesFailsAndLeavesNoFile() async throws {
        try XCTSkipUnless(FF.available)
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["empty.mp4", "empty.mkv"] {
            let url = dir.appendingPathComponent(name)
            let writer = try AssetWriter(outputURL: url)
            let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, preset: "ultrafast"))
            try writer.add(input)
            try writer.startWriting()
            try writer.startSession(atSourceTime: .zero)
            input.markAsFinished()
            do {
                try await writer.finishWriting()
                XCTFail("\(name): finishing with no samples reported success")
            } catch {
                XCTAssertTrue(error.message.contains("no samples were appended"), "\(name): \(error)")
            }
            XCTAssertEqual(writer.status, .failed, name)
            XCTAssertTrue(writer.error?.message.contains("no samples") == true, "\(name): \(String(describing: writer.error))")
            XCTAssertFalse(FileManager.default.fileExists(atPath: url.path), "\(name): a file with no streams was left")
        }
    }

    func testFinishingWithNoSamplesKeepsTheFileItWasToReplace() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("old.mp4")
        let old = Data("an existing file that must stay".utf8)
        try old.write(to: url)
        let writer = try AssetWriter(outputURL: url)
        writer.overwritesExistingFile = true
        writer.movieFragmentInterval = MediaTime(seconds: 1)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, preset: "ultrafast"))
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        await XCTAssertThrowsErrorAsync(try await writer.finishWriting())
        XCTAssertEqual(writer.status, .failed)
        XCTAssertEqual(try Data(contentsOf: url), old, "the existing file was changed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["old.mp4"], "a partial file was left")
        XCTAssertNil(writer.partialFileURL)
    }
}

extension LibraryRefusalTests {
    func testFFmpegCodesAreShownAsText() {
        let exit: Int32 = -1414092869   // AVERROR_EXIT, FFERRTAG('E','X','I','T')
        let e = SwiftRecordError(.io, operation: "connect srt://127.0.0.1:9", message: "no answer in time", ffmpegCode: exit)
        XCTAssertTrue(e.description.contains("Immediate exit requested"), e.description)
        // A message that already says FFmpeg's text does not say it twice.
        let again = SwiftRecordError(.ffmpeg, operation: "x", message: "Invalid argument; check it", ffmpegCode: -22)
        XCTAssertEqual(again.description.components(separatedBy: "Invalid argument").count, 2, again.description)
    }

    func testLosslessWithAProfileThatCannotCodeIt() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (profile, rate) in [("high", RateControl.constantQuantizer(0)), ("main", .constantQuality(0))] {
            let url = dir.appendingPathComponent("\(profile).mp4")
            let writer = try AssetWriter(outputURL: url)
            try writer.add(AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, rateControl: rate, profile: profile, preset: "ultrafast")))
            XCTAssertThrowsError(try writer.startWriting()) { error in
                XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidArgument)
                XCTAssertTrue("\(error)".contains("high444") && "\(error)".contains("lossless"), "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
        }
        let url = dir.appendingPathComponent("high444.mp4")
        try await writeClip(to: url, settings: VideoSettings(width: 64, height: 64, rateControl: .constantQuantizer(0), profile: "high444",
                                                             preset: "ultrafast", threads: 1), frames: 3)
        XCTAssertEqual(try FF.probe(url.path).stream["profile"] as? String, "High 4:4:4 Predictive")
    }

    func testPictureBeyondLibavcodecsLimit() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("huge.mp4")
        let writer = try AssetWriter(outputURL: url)
        try writer.add(AssetWriterInput(outputSettings: VideoSettings(width: 16384, height: 16384, preset: "ultrafast")))
        XCTAssertThrowsError(try writer.startWriting()) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidArgument, "\(error)")
            XCTAssertTrue("\(error)".contains("picture-size limit") && "\(error)".contains("16128"), "\(error)")
            XCTAssertNil((error as? SwiftRecordError)?.ffmpegCode, "refused before libavcodec: \(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
    }
}

private func XCTAssertThrowsErrorAsync(_ body: @autoclosure () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async {
    do {
        try await body()
        XCTFail("no error thrown", file: file, line: line)
    } catch {}
}
