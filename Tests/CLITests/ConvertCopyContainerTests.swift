import Foundation
import TestSupport
import XCTest

// ConvertCopyContainerTests: which containers `convert --copy` writes, and what it says of
// the rest (issue 37, items 7, 25 and 26).
//
// - testCodecsTheMuxerRefusesAreRefusedBeforeWriting: VP9 and AV1 into .mov, FLAC into .mp4
//   and .mov, which libavformat lists as carried but refuses at its header: exit 2 before
//   anything is written, naming codec and container, the containers suggested each taking
//   the file (converted there: exit 0, decoding silently).
// - testSuggestionsNameOnlyContainersForEveryTrack: VP8 + Vorbis into .mov and .mp4: each
//   refusal names only .mkv and .webm (not the other of the two), which take both tracks.
// - testStreamsLeftOutAreNamed: an MKV with a subtitle and an attachment (a font), copied
//   into .mkv (the plan says both are copied) and into .mp4, with and without --copy: the
//   subtitle becomes mov_text, the font is left out, and a warning after the run says so,
//   with -q too (ConvertSubtitleTests checks the streams themselves).
final class ConvertCopyContainerTests: CLITestCase {

    func convert(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, ["convert"] + args, timeout: 120)
    }

    /// Containers the refusal suggests: the ".ext" words after "name the output".
    func suggested(_ message: String) -> Set<String> {
        guard let range = message.range(of: "name the output ") else { return [] }
        let tail = message[range.upperBound...].prefix { $0 != "," }
        return Set(tail.split(separator: " ").filter { $0.hasPrefix(".") }.map(String.init))
    }

    /// `source --copy -o out.EXT` is refused before writing, naming `codec` and `.EXT`; every
    /// container suggested takes it (exit 0, no decoder warning).
    func assertRefusedWithWorkingSuggestions(_ source: String, _ ext: String, codec: String,
                                             file: StaticString = #filePath, line: UInt = #line) throws {
        let output = path("out.\(ext)")
        let r = try convert([source, "--copy", "-o", output])
        XCTAssertEqual(r.status, 2, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(codec) && r.stderr.contains(".\(ext) file"), r.stderr, file: file, line: line)
        XCTAssertFalse(r.stderr.contains("avformat_write_header"), r.stderr, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), file: file, line: line)
        let fits = suggested(r.stderr)
        XCTAssertFalse(fits.isEmpty, r.stderr, file: file, line: line)
        XCTAssertFalse(fits.contains(".\(ext)"), r.stderr, file: file, line: line)
        for fit in fits {
            let other = path("fit\(fit)")
            let c = try convert([source, "--copy", "-q", "-o", other])
            XCTAssertEqual(c.status, 0, "\(fit) was suggested for \(codec): \(c.stderr)", file: file, line: line)
            let check = try Proc.run("ffmpeg", ["-v", "warning", "-i", other, "-f", "null", "-"])
            XCTAssertEqual(check.stderr, "", "\(fit): \(check.stderr)", file: file, line: line)
            try? FileManager.default.removeItem(atPath: other)
        }
    }

    func testCodecsTheMuxerRefusesAreRefusedBeforeWriting() throws {
        let vp9 = path("vp9.mkv"), av1 = path("av1.mkv"), flac = path("flac.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-t", "0.5", "-c:v", "libvpx-vp9",
                       "-deadline", "realtime", "-threads", "1", vp9])
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-t", "0.5", "-c:v", "libsvtav1", "-preset", "12", av1])
        try FF.ffmpeg(["-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "0.5", "-c:a", "flac", flac])
        try assertRefusedWithWorkingSuggestions(vp9, "mov", codec: "vp9")
        try assertRefusedWithWorkingSuggestions(av1, "mov", codec: "av1")
        try assertRefusedWithWorkingSuggestions(flac, "mp4", codec: "flac")
        try assertRefusedWithWorkingSuggestions(flac, "mov", codec: "flac")
    }

    func testSuggestionsNameOnlyContainersForEveryTrack() throws {
        let source = path("vp8.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                       "-t", "0.5", "-c:v", "libvpx", "-threads", "1", "-c:a", "libvorbis", source])
        for ext in ["mov", "mp4"] {
            let r = try convert([source, "--copy", "-o", path("out.\(ext)")])
            XCTAssertEqual(suggested(r.stderr), [".mkv", ".webm"], r.stderr)
        }
        try assertRefusedWithWorkingSuggestions(source, "mov", codec: "vorbis")
        try assertRefusedWithWorkingSuggestions(source, "mp4", codec: "vp8")
    }

    func testStreamsLeftOutAreNamed() throws {
        let plain = path("plain.mkv"), srt = path("s.srt"), font = path("font.ttf"), source = path("subs.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                       "-t", "1", "-c:v", "libx264", "-threads", "1", "-c:a", "aac", plain])
        try "1\n00:00:00,000 --> 00:00:00,900\nHello\n".write(toFile: srt, atomically: true, encoding: .utf8)
        try "not really a font".write(toFile: font, atomically: true, encoding: .utf8)
        try FF.ffmpeg(["-i", plain, "-i", srt, "-attach", font, "-map", "0", "-map", "1", "-c", "copy",
                       "-metadata:s:t", "mimetype=application/x-truetype-font", source])
        let plan = try convert([source, "--copy", "-o", path("copy.mkv")])
        XCTAssertEqual(plan.status, 0, plan.stderr)
        XCTAssertTrue(plan.stderr.contains("track 2: subtitle subrip → copied"), plan.stderr)
        XCTAssertTrue(plan.stderr.contains("attachment font.ttf") && plan.stderr.contains("→ copied"), plan.stderr)
        XCTAssertFalse(plan.stderr.contains("left out"), plan.stderr)
        for (args, name) in [(["--copy"], "quiet-copy.mp4"), ([], "quiet.mp4")] {
            let r = try convert([source, "-q", "-o", path(name)] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
            let warning = r.stderr.split(separator: "\n").first { $0.contains("warning: left out") }.map(String.init) ?? ""
            XCTAssertTrue(warning.contains("attachment") && warning.contains("font.ttf") && warning.contains("cannot carry attachments"), r.stderr)
            XCTAssertFalse(warning.contains("subtitle"), r.stderr)
        }
    }
}
