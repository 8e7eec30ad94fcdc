import Foundation
import TestSupport
import XCTest

// TrackTitleTests: a track's title= as it reaches the file (issue 37, items 19 and 20).
//
// - testLongTitlesAreKeptOrCutAtMOVsLimit: a 300-character title is kept whole in .mp4
//   (handler name) and .mkv (title); in .mov, whose track name is a Pascal string FFmpeg
//   misreads from 128 bytes on, it is its first 127 bytes, whole characters, and the run
//   says so; a 128-byte title likewise. Every file decodes silently.
// - testTitleThatIsNotUTF8IsRefused: title=$'bad\xff\xfe' is refused before anything is
//   written (exit 2), the bytes shown as \xff\xfe, no private-use escape in any file.
final class TrackTitleTests: CLITestCase {
    /// The audio track's tags, by ffprobe.
    func audioTags(_ file: String) throws -> [String: String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream_tags", "-of", "json", file])
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let streams = json?["streams"] as? [[String: Any]]
        return streams?.first?["tags"] as? [String: String] ?? [:]
    }

    func record(_ title: String, _ output: String) throws -> ProcessResult {
        try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--frames", "3", "-q",
                              "--audio", "synthetic,title=\(title)", "-o", output], timeout: 60)
    }

    func testLongTitlesAreKeptOrCutAtMOVsLimit() throws {
        let long = String(repeating: "Ab€", count: 100)
        for ext in ["mp4", "mkv", "mov"] {
            let output = path("long.\(ext)")
            let r = try record(long, output)
            XCTAssertEqual(r.status, 0, r.stderr)
            let tags = try audioTags(output)
            let written = ext == "mkv" ? tags["title"] : tags["handler_name"]
            if ext == "mov" {
                // 25 × "Ab€" is 125 bytes; one more "A" and "b" make 127.
                XCTAssertEqual(written, String(repeating: "Ab€", count: 25) + "Ab", r.stderr)
                XCTAssertTrue(r.stderr.contains("127 bytes") && r.stderr.contains(".mov"), r.stderr)
            } else {
                XCTAssertEqual(written, long, ext)
                XCTAssertFalse(r.stderr.contains("127 bytes"), r.stderr)
            }
            let check = try Proc.run("ffmpeg", ["-v", "warning", "-i", output, "-f", "null", "-"])
            XCTAssertEqual(check.stderr, "", "\(ext): \(check.stderr)")
        }
        let ascii = String(repeating: "x", count: 128)
        let r = try record(ascii, path("ascii.mov"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try audioTags(path("ascii.mov"))["handler_name"], String(ascii.dropLast()))
    }

    func testTitleThatIsNotUTF8IsRefused() throws {
        let r = try Proc.run("/bin/sh", ["-c", #"cd "$1" && "$0" --source synthetic --size 64x48 --frames 3 --audio "synthetic,title=$(printf 'bad\377\376')" -o bad.mp4"#,
                                         binary, dir.path], timeout: 60)
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains(#"bad\xff\xfe"#) && r.stderr.contains("UTF-8"), r.stderr)
        XCTAssertFalse(r.stderr.contains("\u{10FFFF}"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }
}
