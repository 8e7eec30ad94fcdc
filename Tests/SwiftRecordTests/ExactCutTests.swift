import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

// ExactCutTests: a smart cut exact at both ends on H.264 with B-frames (libx264's defaults:
// High, 3 B-frames, B-pyramid), in process, checked with ffmpeg (issue 41). The source: 3 s of
// 320x240 testsrc2 (each picture unlike its neighbours) + AAC, a key frame every 30 pictures.
//
// - testEndInsideAGroupWithBFramesIsExact: 0.51–2.35 s (both inside groups, the end inside a
//   mini-group of B-frames): 56 pictures, the source's 15 to 70; those copied framemd5-equal
//   to the source's (decoded with threads=1), the re-encoded ones (to the key frame at 1 s,
//   and from the last clean point before 2.35 s) at least 45 dB from the source's; the last
//   the source's picture at 2.35 s, not its neighbour; decode times rising and never after
//   presentation; the sound ends within one AAC frame of the pictures; ffmpeg decodes it
//   without a warning. A cut inside the key frame's display and ending a group re-encodes
//   nothing.
// - testCleanPointBeforeTheEnd: SmartCutEnd's decision on libx264's B-pyramid order (I P B
//   B B …): the copy stops after the last mini-group shown before the end, the pictures from
//   there re-encoded, decoded two frames ahead as the copied ones; none when the end falls on
//   a clean point, without B-frames, or after the stream.
// - testJoinOfTwoCutsIsExact: a composition of 0.51–1.31 s and 1.73–2.35 s: 45 pictures, each
//   the source's (identical where copied, at least 45 dB where re-encoded: four stretches,
//   each with its parameter sets), decoding silently.
final class ExactCutTests: FileTestCase {
    static let frames = 90

    func makeSource() throws -> URL {
        let p = path("b-frames.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                       "-t", "3", "-c:v", "libx264", "-g", "30", "-threads", "1", "-c:a", "aac", p])
        return URL(fileURLWithPath: p)
    }

    func seconds(_ s: Double) -> MediaTime { MediaTime(value: Int64(s * 1000), timescale: 1000) }

    func pictures(_ p: String) throws -> [String] {
        FF.hashes(try FF.framemd5(p, inputArgs: ["-threads", "1"], outputArgs: ["-map", "0:v"]))
    }

    /// Per picture of `clip`, its PSNR (dB, infinity when identical) against the source's
    /// pictures `expected` (indexes), taken in order.
    func psnr(_ clip: String, against source: String, _ expected: [Int]) throws -> [Double] {
        let stats = path("psnr-\(UUID().uuidString).txt")
        let select = expected.map { "eq(n\\,\($0))" }.joined(separator: "+")
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", clip, "-i", source, "-filter_complex",
                                        "[0:v]setpts=N/(30*TB)[a];[1:v]select='\(select)',setpts=N/(30*TB)[b];[a][b]psnr=stats_file=\(stats)",
                                        "-f", "null", "-"])
        XCTAssertTrue(r.succeeded, r.stderr)
        let lines = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n")
        return lines.map { line in
            let value = line.components(separatedBy: "psnr_avg:").last?.prefix { !$0.isWhitespace } ?? ""
            return value == "inf" ? .infinity : Double(value) ?? 0
        }
    }

    func assertDecodesSilently(_ p: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", p, "-f", "null", "-"])
        XCTAssertEqual(r.status, 0, file: file, line: line)
        XCTAssertEqual(r.stderr, "", "\(p): \(r.stderr)", file: file, line: line)
    }

    func export(_ session: AssetExportSession, _ name: String) async throws -> String {
        let out = path(name)
        try await session.export(to: URL(fileURLWithPath: out), as: .mp4)
        XCTAssertEqual(session.status, .completed)
        return out
    }

    func testEndInsideAGroupWithBFramesIsExact() async throws {
        let src = try makeSource()
        let session = try AssetExportSession(asset: src, presetName: AssetExportSession.presetPassthrough)
        session.timeRange = TimeRange(start: seconds(0.51), end: seconds(2.35))
        let out = try await export(session, "cut.mp4")
        // 15 re-encoded to the key frame at 1 s, and at least one at the end.
        let tail = session.reencodedPictureCount - 15
        XCTAssertGreaterThan(tail, 0, "nothing re-encoded at the end")
        let source = try pictures(src.path), cut = try pictures(out)
        XCTAssertEqual(cut.count, 56, "pictures 15 (shown at 0.51 s) to 70 (shown at 2.35 s)")
        XCTAssertEqual(Array(cut[15..<(56 - tail)]), Array(source[30..<(71 - tail)]), "the copied pictures are not the source's")
        let quality = try psnr(out, against: src.path, Array(15...70))
        XCTAssertEqual(quality.count, 56)
        XCTAssertGreaterThanOrEqual(quality.min() ?? 0, 45, "\(quality)")
        // The last picture is the source's at 2.35 s, not the one after.
        let neighbour = try psnr(out, against: src.path, Array(16...71))
        XCTAssertLessThan(neighbour.last ?? 99, 35, "the last picture looks like the source's picture 71")
        // Decode times rise and never come after presentation.
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts,dts", "-of", "csv=p=0", out])
        let times = r.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Int64($0) } }.filter { $0.count == 2 }
        XCTAssertEqual(times.count, 56)
        for (a, b) in zip(times, times.dropFirst()) { XCTAssertLessThan(a[1], b[1], "decode times go back: \(a) then \(b)") }
        XCTAssertTrue(times.allSatisfy { $0[1] <= $0[0] }, "a picture decoded after it shows")
        let ends = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time,duration", "-of", "csv=p=0", out])
        let streams = Dictionary(ends.stdout.split(separator: "\n").map { line -> (String, Double) in
            let f = line.split(separator: ",")
            return (String(f[0]), (Double(f[1]) ?? 0) + (Double(f.count > 2 ? f[2] : "0") ?? 0))
        }, uniquingKeysWith: { a, _ in a })
        // The first picture from its own start (0.50 s): pictures stay on the frame grid.
        XCTAssertEqual(streams["video"] ?? 0, 56.0 / 30, accuracy: 0.001, ends.stdout)
        XCTAssertEqual(streams["audio"] ?? 0, streams["video"] ?? 0, accuracy: 1024.0 / 48_000, ends.stdout)
        try assertDecodesSilently(out)

        // 1.01–2.0 s: the picture shown at 1.01 s is the key frame of 1.0 s and 2.0 s ends a
        // group: nothing to re-encode, every picture copied.
        let copy = try AssetExportSession(asset: src, presetName: AssetExportSession.presetPassthrough)
        copy.timeRange = TimeRange(start: seconds(1.01), end: seconds(2))
        let copied = try await export(copy, "copied.mp4")
        XCTAssertEqual(copy.reencodedPictureCount, 0)
        XCTAssertEqual(copy.keyFrameStart?.seconds ?? 0, 1, accuracy: 0.001)
        XCTAssertEqual(try pictures(copied), Array(source[30..<60]))
    }

    func testCleanPointBeforeTheEnd() {
        // Decode order of B-pyramid mini-groups (presentation in frames), decoded 2 frames ahead.
        let order: [Int64] = [0, 4, 2, 1, 3, 8, 6, 5, 7, 12, 10, 9, 11]
        let pictures = order.enumerated().map { (pts: $0.element * 10, dts: Int64($0.offset - 2) * 10) }
        let inside = SmartCutEnd.plan(pictures, end: 65, frameTicks: 10)
        XCTAssertEqual(inside?.copyEnd, 50, "pictures 0 to 4 copied, 5 and 6 re-encoded")
        XCTAssertEqual(inside?.lead, 20)
        XCTAssertEqual(SmartCutEnd.plan(pictures, end: 15, frameTicks: 10)?.copyEnd, 10, "only the key frame copied")
        XCTAssertNil(SmartCutEnd.plan(pictures, end: 90, frameTicks: 10), "the end on a clean point")
        XCTAssertNil(SmartCutEnd.plan(pictures, end: 200, frameTicks: 10), "the end after the stream")
        let plain = (0..<6).map { (pts: Int64($0) * 10, dts: Int64($0) * 10) }
        XCTAssertNil(SmartCutEnd.plan(plain, end: 25, frameTicks: 10), "no B-frames: every picture a clean point")
    }

    func testJoinOfTwoCutsIsExact() async throws {
        let src = try makeSource()
        let composition = MutableComposition()
        try composition.insertTimeRange(TimeRange(start: seconds(0.51), end: seconds(1.31)), of: src, at: .zero)
        try composition.insertTimeRange(TimeRange(start: seconds(1.73), end: seconds(2.35)), of: src, at: composition.duration)
        let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
        let out = try await export(session, "join.mp4")
        // Pictures 15 to 39 (shown at 1.31 s), then 51 (shown at 1.73 s) to 70.
        let expected = Array(15...39) + Array(51...70)
        let source = try pictures(src.path), joined = try pictures(out)
        XCTAssertEqual(joined.count, expected.count)
        let quality = try psnr(out, against: src.path, expected)
        XCTAssertEqual(quality.count, expected.count)
        XCTAssertGreaterThanOrEqual(quality.min() ?? 0, 45, "\(quality)")
        // Identical wherever copied: every picture but the re-encoded ones.
        let same = zip(joined, expected).filter { $0.0 == source[$0.1] }.count
        XCTAssertEqual(same, expected.count - session.reencodedPictureCount)
        XCTAssertGreaterThan(session.reencodedPictureCount, 15 + 9, "both parts' starts and an end re-encoded")
        try assertDecodesSilently(out)
    }
}
