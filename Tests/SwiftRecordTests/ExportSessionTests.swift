import AVFoundation
import Foundation
import SwiftRecord
import TestSupport
import XCTest

// ExportSessionTests: AssetExportSession and MutableComposition in process (issue 41).
//
// - testCompositionPartsAreExportedInOrder: parts 0–1 s and 2–3 s of a file (key frames
//   every second, the second part inserted first), then a third appended and the middle one
//   removed: the pictures are the source's (framemd5), the duration the parts' sum, status
//   .completed and progress 1; the title set in metadata is in the copy's container.
// - testRefusalsLeaveNothingBehind: an unknown preset, an existing output without
//   overwritesExistingFile, a session cancelled before it starts and one cancelled mid-way
//   (at its first progress step), an empty stretch: each throws saying why,
//   status says so, and nothing is left at the output's name (the existing file unchanged).
// - testApplesTrimSnippetExportsAsWritten: Apple's trim (AVURLAsset, AVAssetExportSession
//   with the passthrough preset, a CMTimeRange, export(to:as:)) and join (AVMutableComposition)
//   as Examples/AppleSnippets has them: the pictures are the source's from the key frame.
// - testApplesPresetTrimWithStatesExportsAsWritten: Apple's trim with
//   AVAssetExportPresetHighestQuality, a title and states(updateInterval:), as the DocC
//   article shows it: 2 s of H.264 at the source's size, the title in the container, the
//   progress seen reaching 1.
final class ExportSessionTests: FileTestCase {
    func makeSource() throws -> URL {
        let p = path("src.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                       "-t", "4", "-c:v", "libx264", "-g", "30", "-threads", "1", "-c:a", "aac", p])
        return URL(fileURLWithPath: p)
    }

    func pictures(_ p: String) throws -> [String] { FF.hashes(try FF.framemd5(p, outputArgs: ["-map", "0:v"])) }

    func seconds(_ s: Double) -> MediaTime { MediaTime(value: Int64(s * 1000), timescale: 1000) }

    func testCompositionPartsAreExportedInOrder() async throws {
        let src = try makeSource()
        let composition = MutableComposition()
        try composition.insertTimeRange(TimeRange(start: seconds(2), end: seconds(3)), of: src, at: .zero)
        try composition.insertTimeRange(TimeRange(start: .zero, end: seconds(1)), of: src, at: .zero)
        XCTAssertEqual(composition.duration.seconds, 2, accuracy: 1e-9)
        let out = path("two.mp4")
        let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
        try await session.export(to: URL(fileURLWithPath: out), as: .mp4)
        XCTAssertEqual(session.status, .completed)
        XCTAssertEqual(session.progress, 1)
        let source = try pictures(src.path)
        XCTAssertEqual(try pictures(out), Array(source[0..<30] + source[60..<90]))
        XCTAssertEqual(session.exportedDuration?.seconds ?? 0, 2, accuracy: 1e-9)

        // 3–4 s of the file appended, then the composition's 1–2 s (the file's 2–3 s) removed.
        try composition.insertTimeRange(TimeRange(start: seconds(3), end: seconds(4)), of: src, at: composition.duration)
        composition.removeTimeRange(TimeRange(start: seconds(1), end: seconds(2)))
        XCTAssertEqual(composition.duration.seconds, 2, accuracy: 1e-9)
        let out2 = path("removed.mp4")
        let second = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
        second.metadata = AssetMetadata(title: "Two parts")
        try await second.export(to: URL(fileURLWithPath: out2), as: .mp4)
        XCTAssertEqual(try pictures(out2), Array(source[0..<30] + source[90..<120]))
        let title = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", out2])
        XCTAssertEqual(title.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "Two parts", "a copy's metadata")
    }

    func testRefusalsLeaveNothingBehind() async throws {
        let src = try makeSource()
        XCTAssertThrowsError(try AssetExportSession(asset: src, presetName: "AVAssetExportPresetAppleM4A")) { error in
            XCTAssertTrue("\(error)".contains("AVAssetExportPresetPassthrough"), "\(error)")
        }
        let existing = path("existing.mp4")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: existing))
        let session = try AssetExportSession(asset: src, presetName: AssetExportSession.presetPassthrough)
        do {
            try await session.export(to: URL(fileURLWithPath: existing), as: .mp4)
            XCTFail("an existing file was replaced")
        } catch {
            XCTAssertEqual(error.kind, .fileAlreadyExists)
        }
        XCTAssertEqual(session.status, .failed)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: existing)), Data("keep".utf8))

        let cancelled = try AssetExportSession(asset: src, presetName: AssetExportSession.presetPassthrough)
        cancelled.cancelExport()
        let out = path("cancelled.mp4")
        do {
            try await cancelled.export(to: URL(fileURLWithPath: out), as: .mp4)
            XCTFail("a cancelled session exported")
        } catch {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertEqual(cancelled.status, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        // Stopped mid-way (at its first progress step): nothing under the output's name.
        let long = path("long.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", long])
        let stopped = try AssetExportSession(asset: URL(fileURLWithPath: long), presetName: AssetExportSession.presetPassthrough)
        let reached = Locked<Float>(0)
        stopped.progressHandler = { p in
            reached.withLock { $0 = p }
            stopped.cancelExport()
        }
        let half = path("half.mp4")
        do {
            try await stopped.export(to: URL(fileURLWithPath: half), as: .mp4)
            XCTFail("a cancelled export completed")
        } catch {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertGreaterThan(reached.withLock { $0 }, 0)
        XCTAssertLessThan(reached.withLock { $0 }, 1)
        XCTAssertEqual(stopped.status, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: half))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("half") }, [])

        let gap = MutableComposition()
        try gap.insertTimeRange(nil, of: src, at: .zero)
        try gap.insertEmptyTimeRange(TimeRange(start: seconds(1), duration: seconds(1)))
        XCTAssertEqual(gap.duration.seconds, 5, accuracy: 0.05)
        XCTAssertThrowsError(try AssetExportSession(composition: gap, presetName: AssetExportSession.presetPassthrough))
    }

    func testApplesTrimSnippetExportsAsWritten() async throws {
        let input = try makeSource()
        let output = URL(fileURLWithPath: path("trimmed.mp4"))
        let asset = AVURLAsset(url: input)
        guard let session = AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetPassthrough) else {
            return XCTFail("no session")
        }
        session.timeRange = CMTimeRange(start: CMTime(seconds: 2, preferredTimescale: 600), end: CMTime(seconds: 3, preferredTimescale: 600))
        try await session.export(to: output, as: .mp4)
        XCTAssertEqual(session.status, .completed)
        let source = try pictures(input.path)
        XCTAssertEqual(try pictures(output.path), Array(source[60..<90]))

        let composition = AVMutableComposition()
        for start in [3.0, 0.0] {
            try composition.insertTimeRange(CMTimeRange(start: CMTime(seconds: start, preferredTimescale: 600), duration: CMTime(seconds: 1, preferredTimescale: 600)),
                                            of: asset, at: composition.duration)
        }
        let joined = URL(fileURLWithPath: path("joined.mp4"))
        guard let join = AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough) else { return XCTFail("no session") }
        try await join.export(to: joined, as: .mp4)
        XCTAssertEqual(try pictures(joined.path), Array(source[90..<120] + source[0..<30]))
        XCTAssertNil(AVAssetExportSession(asset: asset, presetName: "AVAssetExportPresetAppleM4A"))
    }

    /// Examples/AppleSnippets' `exportTrimmedClip` as written there: HighestQuality, a title, states.
    func testApplesPresetTrimWithStatesExportsAsWritten() async throws {
        let inputURL = try makeSource()
        let outputURL = URL(fileURLWithPath: path("apple-trim.mp4"))
        let asset = AVURLAsset(url: inputURL)
        guard let exportSession = AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality) else {
            return XCTFail("no session")
        }
        exportSession.timeRange = CMTimeRange(start: CMTime(seconds: 1, preferredTimescale: 600),
                                              duration: CMTime(seconds: 2, preferredTimescale: 600))
        let title = AVMutableMetadataItem()
        title.identifier = .commonIdentifierTitle
        title.value = "Trimmed" as NSString
        exportSession.metadata = [title]
        let monitor = Task { () -> [Double] in
            var seen: [Double] = []
            for await state in exportSession.states(updateInterval: 0.01) {
                if case .exporting(let progress) = state { seen.append(progress.fractionCompleted) }
            }
            return seen
        }
        try await exportSession.export(to: outputURL, as: .mp4)
        let seen = await monitor.value
        XCTAssertEqual(seen.last, 1, "\(seen)")
        XCTAssertEqual(exportSession.status, .completed)
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration:format_tags=title:stream=codec_name,width,height",
                                         "-of", "default=nw=1", outputURL.path])
        XCTAssertTrue(r.stdout.contains("codec_name=h264") && r.stdout.contains("width=160") && r.stdout.contains("TAG:title=Trimmed"), r.stdout)
        let duration = Double(r.stdout.split(separator: "\n").first { $0.hasPrefix("duration=") }?.dropFirst(9) ?? "") ?? 0
        XCTAssertEqual(duration, 2, accuracy: 0.034, r.stdout)
    }
}
