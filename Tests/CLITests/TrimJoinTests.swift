import Foundation
import TestSupport
import XCTest

// TrimJoinTests: `swift-record trim` and `join` (issue 41), checked with ffprobe and ffmpeg.
//
// - testExactTrimReencodesOnlyAtTheCuts: the default (a smart cut). A lossless source (x264
//   qp 0): every picture is the source's from --from to --to (framemd5), none more. A lossy
//   one with B-frames: the pictures up to the next key frame are at least 45 dB (PSNR) from
//   the source's, every packet from that key frame to the re-encoded end is the source's
//   byte for byte, exactly the pictures before --to, and both decode without a warning. An MPEG-4 part 2 source cannot be matched: the default says so and
//   copies from the key frame; --exact refuses it (exit 2), naming --copy.
// - testTrimCopiesFromTheKeyFrameBeforeTheCut: --copy on an ffmpeg-made H.264 (B-frames, key frame
//   every second) + AAC file and a swift-record recording, trimmed inside a group: the
//   video packets are the source's, byte for byte (MD5 of each), from the key frame at or
//   before --from; the pictures are the source's from there (framemd5) up to the last one
//   before --to; the output starts at 0, decodes without a warning, its sound within one
//   AAC frame of its pictures; the message names the key frame.
// - testJoinAddsUpAndKeepsSoundInStep: three ffmpeg-made recordings of 1, 1.5 and 2 s: the
//   joined file's pictures are the three files' pictures in order (framemd5), its packets
//   theirs (MD5), 4.5 s of pictures and of sound, no warning decoding.
// - testJoinRefusesOtherSettingsNamingThem: another picture size, or no sound: exit 2, the
//   setting named (and --reencode offered), nothing written; with --reencode the three are
//   joined at the first's 320x240, 3 s of pictures and of sound.
// - testFileRules: an existing output is refused without -y and left as it was, replaced
//   with -y; a missing input, --from after
//   the end and an input that is no media file are refused (exit 2), nothing written; a
//   second sound track is left out with a warning naming it.
// - testStoppedTrimLeavesNothing: SIGINT while an exact trim re-encodes 299 pictures of
//   1280x720 (seconds, longer under load): exit 130, "stopping" said, nothing at the name.
// - testStoppedReencodedJoinLeavesNothing: SIGINT while join --reencode writes (12 s of
//   640x360 to encode): exit 130, nothing in the folder under the output's name.
final class TrimJoinTests: CLITestCase {
    func source(_ name: String, seconds: String, size: String = "320x240", sound: Bool = true) throws -> String {
        let p = path(name)
        var args = ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30"]
        if sound { args += ["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000"] }
        args += ["-t", seconds, "-c:v", "libx264", "-g", "30", "-threads", "1"]
        if sound { args += ["-c:a", "aac"] }
        try FF.ffmpeg(args + [p])
        return p
    }

    /// Per video packet: its flags and the MD5 of its bytes, in decode order.
    func videoPackets(_ p: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags,data_hash",
                                         "-show_data_hash", "MD5", "-of", "csv", p])
        XCTAssertTrue(r.succeeded, r.stderr)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func pictures(_ p: String) throws -> [String] {
        FF.hashes(try FF.framemd5(p, outputArgs: ["-map", "0:v"]))
    }

    /// Start time and duration of the `v` or `a` stream.
    func stream(_ p: String, _ which: String) throws -> (start: Double, duration: Double) {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", which, "-show_entries", "stream=start_time,duration", "-of", "csv=p=0", p])
        let f = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Double($0) }
        guard f.count == 2 else { throw TestError.failed("ffprobe \(p) \(which): \(r.stdout) \(r.stderr)") }
        return (f[0], f[1])
    }

    func assertDecodesSilently(_ p: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", p, "-f", "null", "-"])
        XCTAssertEqual(r.status, 0, file: file, line: line)
        XCTAssertEqual(r.stderr, "", "\(p): \(r.stderr)", file: file, line: line)
    }

    func testTrimCopiesFromTheKeyFrameBeforeTheCut() throws {
        let ffmpegMade = try source("src.mp4", seconds: "4")
        let out = path("clip.mp4")
        let r = try Proc.run(binary, ["trim", ffmpegMade, "--from", "1.5", "--to", "3.2", "--copy", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("key frame at 1.000 s"), r.stderr)
        let source = try videoPackets(ffmpegMade), copied = try videoPackets(out)
        // The key frame of 1.0 s is the 31st packet in decode order (no reordering across a key frame).
        XCTAssertEqual(copied.first?.hasPrefix("packet,K"), true)
        XCTAssertGreaterThanOrEqual(copied.count, 66)
        XCTAssertEqual(Array(source[30..<(30 + copied.count)]), copied, "the copied packets are not the source's")
        // Pictures 1.0 s … 3.1667 s are the source's (a reference picture shown after --to may follow them).
        let whole = try pictures(ffmpegMade), clip = try pictures(out)
        XCTAssertEqual(Array(clip.prefix(66)), Array(whole[30..<96]))
        let v = try stream(out, "v"), a = try stream(out, "a")
        XCTAssertEqual(v.start, 0, accuracy: 0.001)
        XCTAssertEqual(v.duration, 2.2, accuracy: 0.034 + 0.001)
        XCTAssertEqual(a.start, 0, accuracy: 1024.0 / 48_000)
        XCTAssertEqual(a.start + a.duration, v.start + v.duration, accuracy: 1024.0 / 48_000 + 0.034)
        try assertDecodesSilently(out)

        // A recording of swift-record's own (key frames every 2 s, no B-frames): exact at the end.
        let recording = path("rec.mkv"), part = path("part.mp4")
        let rec = try Proc.run(binary, ["--source", "synthetic", "--size", "320x240", "--fps", "30", "--frames", "150", "-q", "-o", recording])
        XCTAssertEqual(rec.status, 0, rec.stderr)
        let t = try Proc.run(binary, ["trim", recording, "--from", "2.5", "--to", "4", "--copy", "-q", "-o", part])
        XCTAssertEqual(t.status, 0, t.stderr)
        let all = try pictures(recording), cut = try pictures(part)
        XCTAssertEqual(cut, Array(all[60..<120]), "2 s (the key frame) to 4 s")
        try assertDecodesSilently(part)
    }

    func testJoinAddsUpAndKeepsSoundInStep() throws {
        let parts = try [("a.mp4", "1"), ("b.mp4", "1.5"), ("c.mp4", "2")].map { try source($0.0, seconds: $0.1) }
        let out = path("joined.mp4")
        let r = try Proc.run(binary, ["join"] + parts + ["-o", out, "-q"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try pictures(out), try parts.flatMap { try pictures($0) })
        XCTAssertEqual(try videoPackets(out), try parts.flatMap { try videoPackets($0) })
        let v = try stream(out, "v"), a = try stream(out, "a")
        XCTAssertEqual(v.duration, 4.5, accuracy: 0.001)
        XCTAssertEqual(a.start, 0, accuracy: 0.001)
        XCTAssertEqual(a.duration, 4.5, accuracy: 0.02)
        try assertDecodesSilently(out)
        // At each join the sound restarts with the part's own first packet, at the part's start.
        let packets = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "packet=pts_time", "-of", "csv=p=0", out])
        let times = packets.stdout.split(separator: "\n").compactMap { Double($0) }
        for join in [1.0, 2.5] {
            XCTAssertTrue(times.contains { abs($0 - join) < 0.0005 }, "no sound packet starts at the join at \(join) s")
        }
    }

    func testJoinRefusesOtherSettingsNamingThem() throws {
        let a = try source("a.mp4", seconds: "1")
        let small = try source("small.mp4", seconds: "1", size: "160x120")
        let mute = try source("mute.mp4", seconds: "1", sound: false)
        let out = path("joined.mp4")
        let size = try Proc.run(binary, ["join", a, small, "-o", out])
        assertRefused(size, says: ["picture size 160x120, not 320x240", "small.mp4", "--reencode"], "another size")
        XCTAssertEqual(size.status, 2)
        let sound = try Proc.run(binary, ["join", a, mute, "-o", out])
        assertRefused(sound, says: ["has no sound"], "no sound")
        XCTAssertEqual(sound.status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // --reencode brings the second to the first's size; the silent one's stretch is silence.
        let joined = try Proc.run(binary, ["join", a, small, mute, "--reencode", "-o", out])
        XCTAssertEqual(joined.status, 0, joined.stderr)
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,width,height,duration", "-of", "csv=p=0", out])
        let streams = r.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        XCTAssertEqual(streams.first?.prefix(3), ["video", "320", "240"], r.stdout)
        for s in streams { XCTAssertEqual(Double(s.last ?? "") ?? 0, 3, accuracy: 0.034, r.stdout) }
    }

    func testFileRules() throws {
        let input = try source("in.mp4", seconds: "2")
        let out = path("out.mp4")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: out))
        let refused = try Proc.run(binary, ["trim", input, "--from", "1", "-o", out])
        assertRefused(refused, says: ["-y"], "existing output")
        XCTAssertEqual(refused.status, 2)
        assertUnchanged(out, Data("keep".utf8), "a refused trim")
        let replaced = try Proc.run(binary, ["trim", input, "--from", "1", "-o", out, "-y", "-q"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(try pictures(out).count, 30)
        let missing = try Proc.run(binary, ["trim", path("nothing.mp4"), "-o", path("x.mp4")])
        assertRefused(missing, says: ["nothing.mp4", "does not exist"], "a missing input")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.mp4")))
        let late = try Proc.run(binary, ["trim", input, "--from", "5", "-o", path("late.mp4")])
        assertRefused(late, says: ["5.000 s", "end of the file (2.000 s)"], "--from after the end")
        XCTAssertEqual(late.status, 2)
        let garbage = path("garbage.mp4")
        try Data("not a recording".utf8).write(to: URL(fileURLWithPath: garbage))
        let bad = try Proc.run(binary, ["trim", garbage, "-o", path("bad.mp4")])
        assertRefused(bad, says: ["garbage.mp4"], "an input that is no media file")
        XCTAssertEqual(bad.status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("late.mp4")) || FileManager.default.fileExists(atPath: path("bad.mp4")))
        // A second sound track is left out, and said.
        let two = path("two.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine", "-f", "lavfi", "-i", "sine=f=200",
                       "-map", "0", "-map", "1", "-map", "2", "-t", "2", "-c:v", "libx264", "-c:a", "aac", two])
        let second = try Proc.run(binary, ["trim", two, "--from", "1", "-q", "-o", path("two-trim.mkv")])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stderr.contains("left out stream 2 (audio, aac)"), second.stderr)
        // The default name: IN-trim.EXT beside the input.
        let named = try Proc.run(binary, ["trim", input, "--to", "1", "-q"])
        XCTAssertEqual(named.status, 0, named.stderr)
        XCTAssertEqual(try pictures(path("in-trim.mp4")).count, 30)
    }

    func testExactTrimReencodesOnlyAtTheCuts() throws {
        let lossless = path("lossless.mp4"), exact = path("exact.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "3",
                       "-c:v", "libx264", "-qp", "0", "-g", "30", "-threads", "1", "-c:a", "aac", lossless])
        let r = try Proc.run(binary, ["trim", lossless, "--from", "0.5", "--to", "2.5", "-o", exact])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("re-encoded 15 pictures"), r.stderr)
        let source = try pictures(lossless), cut = try pictures(exact)
        XCTAssertEqual(cut, Array(source[15..<75]), "the pictures from 0.5 s to 2.5 s are not the source's")
        XCTAssertEqual(try stream(exact, "v").start, 0, accuracy: 0.001)
        try assertDecodesSilently(exact)

        let lossy = try self.source("lossy.mp4", seconds: "4"), smart = path("smart.mp4")
        let s = try Proc.run(binary, ["trim", lossy, "--from", "1.5", "--to", "3.2", "-o", smart])
        XCTAssertEqual(s.status, 0, s.stderr)
        // 15 re-encoded pictures (1.5 s to the key frame at 2 s), then the source's packets
        // from there, then the few before 3.2 s that B-frames tie to later ones, re-encoded.
        let reencoded = s.stderr.components(separatedBy: "re-encoded ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        XCTAssertGreaterThanOrEqual(reencoded, 15, s.stderr)
        let copied = try videoPackets(smart), original = try videoPackets(lossy)
        let tail = reencoded - 15
        XCTAssertEqual(Array(copied[15..<(copied.count - tail)]), Array(original[60..<(60 + copied.count - 15 - tail)]))
        let psnr = try Proc.run("ffmpeg", ["-nostdin", "-v", "info", "-i", smart, "-ss", "1.5", "-i", lossy, "-filter_complex",
                                           "[0:v]trim=end_frame=15,setpts=PTS-STARTPTS[a];[1:v]trim=end_frame=15,setpts=PTS-STARTPTS[b];[a][b]psnr",
                                           "-f", "null", "-"])
        let minimum = psnr.stderr.components(separatedBy: "min:").last.flatMap { Double($0.prefix { "0123456789.".contains($0) }) }
        XCTAssertGreaterThanOrEqual(minimum ?? 0, 45, psnr.stderr)
        XCTAssertEqual(try pictures(smart).count, 51, "1.5 s to 3.2 s: pictures 45 to 95, none after")
        try assertDecodesSilently(smart)

        let mpeg4 = path("mpeg4.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2", "-c:v", "mpeg4", "-g", "30", mpeg4])
        let fallback = try Proc.run(binary, ["trim", mpeg4, "--from", "0.5", "-o", path("fallback.mkv")])
        XCTAssertEqual(fallback.status, 0, fallback.stderr)
        XCTAssertTrue(fallback.stderr.contains("not exact") && fallback.stderr.contains("only H.264"), fallback.stderr)
        let refused = try Proc.run(binary, ["trim", mpeg4, "--from", "0.5", "--exact", "-o", path("refused.mkv")])
        assertRefused(refused, says: ["only H.264", "--copy"], "--exact of MPEG-4 part 2")
        XCTAssertEqual(refused.status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("refused.mkv")))
    }

    func testStoppedTrimLeavesNothing() throws {
        let input = path("long-gop.mp4"), out = path("stopped.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "10", "-c:v", "libx264", "-preset", "ultrafast",
                       "-g", "300", input])
        try interruptOnceWriting(["trim", input, "--from", "0.1", "-o", out], out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "a stopped trim left \(out)")
    }

    /// Runs `args`, sends SIGINT once `out` exists (it is created empty when the export
    /// starts, then written), and expects exit 130 with "stopping" and "no output written".
    func interruptOnceWriting(_ args: [String], _ out: String, line: UInt = #line) throws {
        let child = try spawnTracked(args)
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: out) && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: out), child.currentStderr(), line: line)
        child.signal(SIGINT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 130, r.stderr, line: line)
        XCTAssertTrue(r.stderr.contains("stopping") && r.stderr.contains("no output written"), r.stderr, line: line)
    }

    func testStoppedReencodedJoinLeavesNothing() throws {
        let input = path("part.mp4"), out = path("stopped-join.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", "6", "-c:v", "libx264", "-preset", "ultrafast", input])
        try interruptOnceWriting(["join", input, input, "--reencode", "-o", out], out)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("stopped-join") }, [],
                       "a stopped join left something")
    }
}
