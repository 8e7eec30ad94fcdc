// A file swift-record creates is written only through the descriptor that holds it
// (`OutputFile.ioPath`): a name another program takes over between the creation and the
// writer's open is never written. CI found the race (WrittenPathTests'
// testConcurrentRunsNeverTakeEachOthersFile failed under AddressSanitizer, whose slower start
// widened the window between `createEmpty()` and libavformat's open by name).
//
// Catalogue:
// - testANameTakenOverBeforeTheWriterOpensIsNeverWritten: the file created, another file renamed
//   over its name, then the writer opens `ioPath` and writes: the other file keeps its bytes,
//   `commit()` fails naming the partial copy, which holds what was written.
// - testAWriterWritesThroughIoPathWithFaststart: an AssetWriter (its muxer opened on `ioPath`)
//   with shouldOptimizeForNetworkUse (+faststart: libavformat reopens the output by name for its
//   second pass) writes 10 frames: ffprobe reads them, the moov lies before the mdat, nothing
//   else is left in the folder.
import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

final class OutputFileTakeoverTests: FileTestCase {
    override class var checksWithFFmpeg: Bool { false }

    private func takeOver(_ path: String, with bytes: String) throws {
        let foreign = dir.appendingPathComponent("foreign").path
        try bytes.write(toFile: foreign, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(foreign, path), 0)
    }

    func testANameTakenOverBeforeTheWriterOpensIsNeverWritten() throws {
        let path = dir.appendingPathComponent("new.mp4").path
        let file = try OutputFile(path, what: "output", overwrite: false)
        try file.createEmpty()
        try takeOver(path, with: "another program's file\n")
        XCTAssertTrue(file.ioPath.hasPrefix("/proc/self/fd/"), file.ioPath)
        let fd = open(file.ioPath, O_WRONLY | O_TRUNC | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(write(fd, "ours", 4), 4)
        close(fd)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "another program's file\n", "the other file is untouched")
        XCTAssertThrowsError(try file.commit()) { error in
            let message = (error as? SwiftRecordError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("was replaced by another file"), message)
            let rescued = try? XCTUnwrap(file.rescuedPath)
            XCTAssertEqual(rescued.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }, "ours")
        }
    }

    func testAWriterWritesThroughIoPathWithFaststart() async throws {
        let path = dir.appendingPathComponent("clip.mp4").path
        let writer = try AssetWriter(outputURL: URL(fileURLWithPath: path))
        writer.shouldOptimizeForNetworkUse = true      // +faststart: libavformat reopens the output by name
        let input = AssetWriterInput(outputSettings: VideoSettings(codec: .h264, width: 64, height: 48))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let scene = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 64, height: 48)))
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        for i in 0..<10 {
            let frame = try XCTUnwrap(try scene.nextFrame(from: pool))
            try await adaptor.append(frame.pixelBuffer, withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames", "-of", "csv=p=0", path])
        XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "h264,10", probe.stderr)
        // +faststart: the index (moov) before the media (mdat).
        let head = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let moov = head.range(of: Data("moov".utf8)), mdat = head.range(of: Data("mdat".utf8))
        XCTAssertNotNil(moov)
        XCTAssertNotNil(mdat)
        if let moov, let mdat { XCTAssertLessThan(moov.lowerBound, mdat.lowerBound) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["clip.mp4"], "nothing else written")
    }
}
