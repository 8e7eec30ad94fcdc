import Foundation
import TestSupport
import XCTest

// FFmpegWarningTests: runs that succeed print none of FFmpeg's internal warnings, their
// causes fixed (issue 37, item 27).
//
// - testCopiedAndRecordedSoundSaysItsFrameSize: an Opus recording into .mp4 and an AC3 MKV
//   remuxed with --copy into .mp4 exit 0 without "codec frame size is not set"; the AC3
//   packets are the input's, byte for byte.
// - testSoundStartingLateInMPEGTSIsProbed: an MPEG-TS whose sound starts 8 s in (past
//   FFmpeg's 5 s probe) converts, with --copy too (it was refused as "aac 0 Hz 0 ch"), and
//   repairs, without "Could not find codec parameters for stream 1"; the copy has as many
//   sound packets as the input.
// - testMatroskaRepairSetsEveryDecodeTime: repairing an MKV whose H.264 has B-frames (its
//   first packets carry no decode time) exits 0 without "Timestamps are unset", the
//   packets the input's.
final class FFmpegWarningTests: CLITestCase {
    /// "stream hash" of each of `file`'s packets (framemd5 of a stream copy; side data,
    /// which a demuxer may add, left out).
    func packets(_ file: String, inputArgs: [String] = []) throws -> [String] {
        try FF.framemd5(file, inputArgs: inputArgs, outputArgs: ["-c", "copy"]).filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { $0.count >= 6 }.map { "\($0[0]) \($0[5])" }
    }

    func testSoundStartingLateInMPEGTSIsProbed() throws {
        let ts = path("late.ts")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=12", "-itsoffset", "8",
                       "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=4", "-map", "0", "-map", "1",
                       "-c:v", "libx264", "-threads", "1", "-c:a", "aac", ts])
        for (args, out) in [(["--copy"], "copy.mkv"), ([], "encoded.mp4")] {
            let r = try Proc.run(binary, ["convert", ts, "-o", path(out)] + args, timeout: 120)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("Could not find codec parameters"), r.stderr)
            XCTAssertFalse(r.stderr.contains("warning: ["), r.stderr)
        }
        // (ffmpeg itself must probe further to see the input's sound.)
        let input = try packets(ts, inputArgs: ["-analyzeduration", "30000000", "-probesize", "50000000"])
        let sound = { (lines: [String]) in lines.filter { $0.hasPrefix("1 ") } }
        XCTAssertFalse(sound(input).isEmpty)
        // As many (Matroska stores them without the TS's ADTS headers, so not the same bytes).
        XCTAssertEqual(sound(try packets(path("copy.mkv"))).count, sound(input).count)
        let repaired = try Proc.run(binary, ["repair", ts, "-o", path("repaired.mkv")], timeout: 120)
        XCTAssertEqual(repaired.status, 0, repaired.stderr)
        XCTAssertFalse(repaired.stderr.contains("Could not find codec parameters"), repaired.stderr)
    }

    func testCopiedAndRecordedSoundSaysItsFrameSize() throws {
        let opus = path("opus.mp4")
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--frames", "15", "--audio", "synthetic",
                                      "--audio-codec", "opus", "-o", opus], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("frame size"), r.stderr)

        let ac3 = path("ac3.mkv"), out = path("ac3.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1",
                       "-c:v", "libx264", "-threads", "1", "-c:a", "ac3", ac3])
        let c = try Proc.run(binary, ["convert", ac3, "--copy", "-o", out], timeout: 60)
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertFalse(c.stderr.contains("frame size"), c.stderr)
        let sound = { (lines: [String]) in lines.filter { $0.hasPrefix("1 ") } }
        XCTAssertFalse(sound(try packets(ac3)).isEmpty)
        XCTAssertEqual(sound(try packets(out)), sound(try packets(ac3)))
        for file in [opus, out] {
            XCTAssertEqual(try Proc.run("ffmpeg", ["-v", "warning", "-i", file, "-f", "null", "-"]).stderr, "", file)
        }
    }

    func testMatroskaRepairSetsEveryDecodeTime() throws {
        let source = path("b.mkv"), out = path("r.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30", "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1",
                       "-c:v", "libx264", "-threads", "1", "-bf", "2", "-c:a", "aac", source])
        let r = try Proc.run(binary, ["repair", source, "-o", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("Timestamps are unset"), r.stderr)
        XCTAssertEqual(try packets(out), try packets(source))
        XCTAssertEqual(try Proc.run("ffmpeg", ["-v", "warning", "-i", out, "-f", "null", "-"]).stderr, "")
    }
}
