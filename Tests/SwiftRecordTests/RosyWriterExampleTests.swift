import Foundation
import TestSupport
import XCTest

/// Examples/RosyWriter, Apple's MovieRecorder ported with only its imports changed, run as
/// built: a QuickTime movie with an H.264 track of de-greened pictures and an AAC track.
final class RosyWriterExampleTests: XCTestCase {
    func testPortedMovieRecorderWritesBothTracks() throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("rosy.mov")
        let run = try Proc.run(PackagePaths.product("RosyWriter"), [url.path, "2"], timeout: 120)
        XCTAssertTrue(run.succeeded, run.stdout + run.stderr)
        // swift-log's default handler shows info, but FFmpeg's messages arrive at warning
        // unless the application asks for more: no libx264 statistics.
        XCTAssertFalse((run.stdout + run.stderr).contains("libx264"), run.stderr)
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init), run.stdout)
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        XCTAssertEqual(stats["failed"] as? Bool, false, line)
        let appended = try XCTUnwrap(int(stats["appended"])), dropped = try XCTUnwrap(int(stats["dropped"]))
        XCTAssertEqual(appended + dropped, 60, line)
        XCTAssertGreaterThanOrEqual(appended, 30, "a live recorder drops frames only when the writer falls behind: \(line)")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,width,height,nb_read_frames:format=duration,format_name",
                                             "-of", "json", url.path])
        XCTAssertTrue(probe.succeeded, probe.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video", "audio"])
        XCTAssertEqual(streams[0]["codec_name"] as? String, "h264")
        XCTAssertEqual(int(streams[0]["width"]), 640)
        XCTAssertEqual(int(streams[0]["height"]), 480)
        XCTAssertEqual(int(streams[0]["nb_read_frames"]), appended)
        XCTAssertEqual(streams[1]["codec_name"] as? String, "aac")
        let format = try XCTUnwrap(json["format"] as? [String: Any])
        XCTAssertTrue((format["format_name"] as? String ?? "").contains("mov"))
        let duration = try XCTUnwrap(Double(format["duration"] as? String ?? ""))
        XCTAssertEqual(duration, 2, accuracy: 0.1, "two seconds of pictures and sound")

        // The renderer took the green out: in the middle of a frame, green is near 0 while
        // red and blue are not.
        let (red, green, blue) = try FF.rgb(url.path, x: 500, y: 100, at: 1.0)
        XCTAssertLessThan(green, 12, "rgb \(red) \(green) \(blue)")
        XCTAssertGreaterThan(red + blue, 100, "rgb \(red) \(green) \(blue)")
    }
}
