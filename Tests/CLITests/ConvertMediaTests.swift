import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// ConvertMediaTests: `swift-record convert` of media files (not raw video), checked with
// ffprobe and ffmpeg's framemd5.
//
// - testCopyRemuxesMKVToMP4PacketIdentical: --copy MKV → MP4: every packet's bytes equal
//   the source's per stream, decoded pictures identical, exit 0.
// - testOwnRecordingRemuxesToMP4: an MKV recorded by `swift-record` itself (synthetic scene
//   and tone, 2 s) → --copy MP4: packets identical per stream, every frame decodes.
// - testDefaultReencodesWithTheEncoderOptions: no --copy: the video re-encoded with the
//   options asked for (--codec hevc --keyint 15), the sound as AAC; same frames, duration.
// - testReencodingMatchesTheRawPathsQuality: the same 2 s of 640x360 pictures as raw yuv420p
//   and as a lossless FFV1 MKV, each converted with --crf 20 --threads 1: both files 60
//   frames of 2.000 s (and their summaries say so), and their PSNR against the raw pictures (ffmpeg's psnr filter) within
//   0.2 dB of each other, above 40 dB.
// - testWebMOutputDefaultsToVP9AndOpus: re-encoding into .webm picks VP9 and Opus.
// - testCopyOfH264IntoWebMIsRefused: exit 2, the message names codec and container,
//   nothing written.
// - testGarbageAndTruncatedInputAreClearErrors: noise named .mkv and an MKV cut inside its
//   header: non-zero exit, the message names the file, nothing written; an MKV cut in the
//   middle: exit 1 saying it is cut short, what was read kept as a playable MP4.
// - testStopWhileAPipeIsQuiet: an MKV half-written into a FIFO whose writer went quiet:
//   SIGINT and SIGTERM stop it within 2 s (exit 130); without --allow-partial nothing is
//   left, with it the frames read so far are kept and decode.
// - testOutputRulesHold: an existing output is kept without -y (exit 2), replaced with -y;
//   the input as its own output is refused; raw-only options are refused for media input.
final class ConvertMediaTests: CLITestCase {
    /// An MKV of 2 s: H.264 (B-frames) 320x240 at 30 fps and AAC stereo at 48 kHz (ffmpeg's lavfi).
    func makeSource(_ name: String = "in.mkv") throws -> String {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "2", "-c:v", "libx264", "-threads", "1", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p",
                       "-c:a", "aac", "-ac", "2", "-shortest", p])
        return p
    }

    func convert(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, ["convert"] + args, timeout: 120)
    }

    /// framemd5 hashes of stream `stream` (the first column).
    func hashes(_ lines: [String], stream: Int) -> [String] {
        lines.filter { $0.split(separator: ",").first.map { Int($0.trimmingCharacters(in: .whitespaces)) } == stream }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func streams(_ file: String) throws -> [[String: Any]] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_streams", "-count_frames", "-of", "json", file])
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return json?["streams"] as? [[String: Any]] ?? []
    }

    func testCopyRemuxesMKVToMP4PacketIdentical() throws {
        let source = try makeSource()
        let r = try convert([source, "--copy"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let output = path("in.mp4")
        let a = try FF.framemd5(source, outputArgs: ["-c", "copy"])
        let b = try FF.framemd5(output, outputArgs: ["-c", "copy"])
        for stream in 0...1 {
            XCTAssertFalse(hashes(a, stream: stream).isEmpty)
            XCTAssertEqual(hashes(a, stream: stream), hashes(b, stream: stream), "stream \(stream): packets differ")
        }
        let decodedA = FF.hashes(try FF.framemd5(source, outputArgs: ["-map", "0:v", "-threads", "1"]))
        let decodedB = FF.hashes(try FF.framemd5(output, outputArgs: ["-map", "0:v", "-threads", "1"]))
        XCTAssertEqual(decodedA.count, 60)
        XCTAssertEqual(decodedA, decodedB)
        XCTAssertTrue(r.stderr.contains("copied"), r.stderr)
    }

    func testReencodingMatchesTheRawPathsQuality() throws {
        let raw = path("src.yuv"), mkv = path("src.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", "2", "-pix_fmt", "yuv420p", "-f", "rawvideo", raw])
        try FF.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-r", "30", "-i", raw, "-c:v", "ffv1", mkv])
        let fromRaw = path("raw.mp4"), fromMedia = path("media.mp4")
        for (arguments, out) in [([raw, "--size", "640x360", "--fps", "30"], fromRaw), ([mkv], fromMedia)] {
            let r = try convert(arguments + ["--crf", "20", "--threads", "1", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("60 frames, 2.000 s"), "the summary says the file's length: \(r.stderr)")
        }
        var psnr: [Double] = []
        for out in [fromRaw, fromMedia] {
            let probe = try streams(out).first
            XCTAssertEqual(int(probe?["nb_read_frames"]), 60, out)
            XCTAssertEqual((probe?["duration"] as? String).flatMap(Double.init) ?? 0, 2.0, accuracy: 0.001, out)
            let decoded = out + ".yuv"
            try FF.ffmpeg(["-i", out, "-f", "rawvideo", "-pix_fmt", "yuv420p", decoded])
            let r = try Proc.run("ffmpeg", ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-i", decoded,
                                            "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-i", raw, "-lavfi", "psnr", "-f", "null", "-"])
            let value = r.stderr.range(of: #"average:[0-9.]+"#, options: .regularExpression).flatMap { Double(r.stderr[$0].dropFirst(8)) }
            psnr.append(try XCTUnwrap(value, r.stderr))
        }
        XCTAssertGreaterThan(psnr.min() ?? 0, 40, "\(psnr)")
        XCTAssertEqual(psnr[0], psnr[1], accuracy: 0.2, "the media path re-encodes as well as the raw path: \(psnr)")
    }

    func testDefaultReencodesWithTheEncoderOptions() throws {
        let source = try makeSource()
        let output = path("out.mp4")
        let r = try convert([source, "-o", output, "--codec", "hevc", "--keyint", "15", "--crf", "30", "--threads", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try streams(output)
        XCTAssertEqual(s.count, 2)
        XCTAssertEqual(s.first?["codec_name"] as? String, "hevc")
        XCTAssertEqual(int(s.first?["nb_read_frames"]), 60)
        XCTAssertEqual(s.last?["codec_name"] as? String, "aac")
        XCTAssertEqual(double(s.first?["duration"]) ?? 0, 2, accuracy: 0.05)
        let flags = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags", "-of", "csv=p=0", output])
        XCTAssertEqual(flags.stdout.split(separator: "\n").filter { $0.hasPrefix("K") }.count, 4, "a key frame every 15 of 60 frames")
        let decoded = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "null", "-"])
        XCTAssertTrue(decoded.succeeded && decoded.stderr.isEmpty, decoded.stderr)
    }

    func testWebMOutputDefaultsToVP9AndOpus() throws {
        let source = try makeSource()
        let output = path("out.webm")
        let r = try convert([source, "-o", output, "--preset", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try streams(output)
        XCTAssertEqual(s.map { $0["codec_name"] as? String }, ["vp9", "opus"])
        XCTAssertEqual(int(s.first?["nb_read_frames"]), 60)
    }

    func testCopyOfH264IntoWebMIsRefused() throws {
        let source = try makeSource()
        let output = path("out.webm")
        let r = try convert([source, "-o", output, "--copy"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("h264") && r.stderr.contains(".webm"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["in.mkv"])
    }

    func testGarbageAndTruncatedInputAreClearErrors() throws {
        let noise = path("noise.mkv")
        // The same noise every run (random bytes are now and then taken for MPEG audio).
        var seed: UInt32 = 12_345
        let noiseBytes = (0..<65_536).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }
        try Data(noiseBytes).write(to: URL(fileURLWithPath: noise))
        let r = try convert([noise, "-o", path("noise.mp4")])
        assertRefused(r, says: ["noise.mkv"], "noise as input")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("noise.mp4")))
        let source = try makeSource()
        let cut = path("cut.mkv")
        try Data(try Data(contentsOf: URL(fileURLWithPath: source)).prefix(200)).write(to: URL(fileURLWithPath: cut))
        let c = try convert([cut, "--copy"])
        assertRefused(c, says: ["cut.mkv"], "a header cut short")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("cut.mp4")))
        // Cut in the middle: what could be read is converted and kept, and the exit says the input was short.
        let half = path("half.mkv")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: half))
        let h = try convert([half, "--copy"])
        assertRefused(h, says: ["half.mkv", "cut short", "kept what was written"], "a file cut in the middle")
        XCTAssertEqual(h.status, 1)
        let kept = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path("half.mp4"), "-f", "null", "-"])
        XCTAssertTrue(kept.succeeded && kept.stderr.isEmpty, kept.stderr)
    }

    func testOutputRulesHold() throws {
        let source = try makeSource()
        let output = path("in.mp4")
        let old = Data("not a video".utf8)
        try old.write(to: URL(fileURLWithPath: output))
        let r = try convert([source, "--copy"])
        assertRefused(r, says: ["already exists"], "existing output without -y")
        XCTAssertEqual(r.status, 2)
        assertUnchanged(output, old, "existing output")
        let y = try convert([source, "--copy", "-y"])
        XCTAssertEqual(y.status, 0, y.stderr)
        XCTAssertEqual(int(try FF.probe(output).stream["nb_read_frames"]), 60)
        let same = try convert([source, "-o", source, "--copy", "-y"])
        assertRefused(same, says: ["same file"], "input as output")
        let rawOnly = try convert([source, "--fps", "25"])
        assertRefused(rawOnly, says: ["--fps"], "a raw-only option")
    }

    func testStopWhileAPipeIsQuiet() throws {
        // Small enough that half of it fits in a pipe's buffer.
        let source = path("small.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-threads", "1", "-c:a", "aac", "-ac", "1", "-b:a", "32k",
                       "-shortest", source])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let half = Array(bytes.prefix(min(bytes.count / 2, 48_000)))
        for (sig, partial) in [(SIGINT, false), (SIGTERM, true)] {
            let fifo = path("quiet-\(sig).mkv")
            let out = path("quiet-\(sig).mp4")
            XCTAssertEqual(mkfifo(fifo, 0o600), 0)
            // Opened read-write, so opening does not wait for a reader; kept open: the writer is idle.
            let writer = open(fifo, O_RDWR)
            XCTAssertGreaterThanOrEqual(writer, 0)
            defer { close(writer) }
            XCTAssertEqual(Glibc.write(writer, half, half.count), half.count)
            let child = try spawnTracked(["convert", fifo, "--copy", "-o", out] + (partial ? ["--allow-partial"] : []))
            let deadline = Date().addingTimeInterval(60)
            while !FileManager.default.fileExists(atPath: out) && child.exited() == nil && Date() < deadline { usleep(5_000) }
            usleep(300_000)   // time to read what is there and block on the rest
            XCTAssertNil(child.exited(), "ended before the signal: \(child.currentStderr())")
            let sent = Date()
            child.signal(sig)
            let r = child.wait(timeout: 30)
            let took = Date().timeIntervalSince(sent)
            XCTAssertLessThan(took, PackagePaths.productsAreSanitized ? 6 : 2, "signal \(sig): took \(took) s to stop")
            XCTAssertEqual(r.status, 130, r.stderr)
            if partial {
                XCTAssertGreaterThan(int(try FF.probe(out).stream["nb_read_frames"]) ?? 0, 0, r.stderr)
                let decoded = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "null", "-"])
                XCTAssertTrue(decoded.succeeded && decoded.stderr.isEmpty, decoded.stderr)
            } else {
                XCTAssertFalse(FileManager.default.fileExists(atPath: out), r.stderr)
            }
        }
    }

    func testOwnRecordingRemuxesToMP4() throws {
        let recording = path("rec.mkv")
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "320x240", "--frames", "60", "--audio", "synthetic",
                                      "--preset", "ultrafast", "--quiet", "-o", recording], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let output = path("rec.mp4")
        let c = try convert([recording, "--copy", "-o", output])
        XCTAssertEqual(c.status, 0, c.stderr)
        let a = try FF.framemd5(recording, outputArgs: ["-c", "copy"])
        let b = try FF.framemd5(output, outputArgs: ["-c", "copy"])
        for stream in 0...1 {
            XCTAssertFalse(hashes(a, stream: stream).isEmpty)
            XCTAssertEqual(hashes(a, stream: stream), hashes(b, stream: stream), "stream \(stream): packets differ")
        }
        XCTAssertEqual(int(try FF.probe(output).stream["nb_read_frames"]), 60)
        let decoded = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "null", "-"])
        XCTAssertTrue(decoded.succeeded && decoded.stderr.isEmpty, decoded.stderr)
    }
}
