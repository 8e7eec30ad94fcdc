import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// MediaTimesAndEndsTests: `convert`, `thumbnail` and `repair` of media whose time stamps or
// ends are unusual (issue 37, items 6, 9, 10, 11, 17), checked with ffprobe, `ffmpeg -v
// warning … -f null -` and ffmpeg's pictures.
//
// - testMediaWhoseTimesDoNotStartAtZero (6): an MKV remuxed from MPEG-TS with -copyts
//   (starts at 1.4 s) and one shifted by 3,000,000 s: convert and --copy exit 0 with every
//   frame; thumbnail --at 0 and --at 1 are the pictures ffmpeg shows at those times (counted
//   from the file's start); --every 0.5s makes 4 pictures of the 1.53-s file; a 3x1 sheet of
//   the shifted file has three different tiles.
// - testCopyOfSoundThatStartsBeforeZero (11): an MKV whose sound starts at -0.05 s (its
//   first video packet has no time stamp in Matroska): --copy → MP4 exits 0, every frame
//   there and decoding without a warning.
// - testThumbnailOfAFileCutShort (9): an MKV cut to 45 % of its bytes: --at inside what is
//   left exits 0; --at after its last picture exits 1 saying where the pictures end, no
//   file; --sheet 3x3 exits 1, its tiles after the last picture black, the others not.
// - testRepairInPlaceChecksTheFileReachesItsEnd (10): that cut MKV (its header still says
//   1.5 s) repaired in place is repaired, exit 0, its duration now where its packets end,
//   decoding silently; an MP4 with its index and no sample (a fragmented recording killed
//   before its first fragment: ftyp + moov) exits 1 and is left as it was; the whole MKV is
//   "nothing to repair", byte for byte.
// - testKilledConvertToMP4IsRepairable (17): convert --copy of a 3-s MKV read from a pipe
//   whose writer went quiet, SIGKILLed once its MP4 holds a fragment: the file plays (frames
//   decode) and `repair` makes it an ordinary MP4 (moov, no moof) that decodes silently;
//   a finished conversion (re-encoded and --copy) of an MKV whose pictures start 1 s after
//   its sound keeps them there (the fragments and their rewrite keep each track's start).
final class MediaTimesAndEndsTests: CLITestCase {

    func run(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, args, timeout: 120)
    }

    /// A 1.5-s MKV: H.264 320x240 at 30 fps (a key frame every 15) and AAC, as ffmpeg writes it
    /// with `extra` output options.
    func makeMKV(_ name: String, extra: [String] = []) throws -> String {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "1.5", "-c:v", "libx264", "-threads", "1", "-bf", "0", "-g", "15", "-pix_fmt", "yuv420p",
                       "-c:a", "aac"] + extra + [p])
        return p
    }

    /// Frames of the first video stream, counted by decoding.
    func frames(_ file: String) throws -> Int {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames",
                                         "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file])
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// What `ffmpeg -v warning` says decoding `file` (empty: decodes silently).
    func warnings(_ file: String) throws -> String {
        try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", file, "-f", "null", "-"]).stderr
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The raw RGB bytes of a picture file (or of `file`'s picture number `frame`, from 0).
    func rgb(_ file: String, frame: Int? = nil) throws -> Data {
        let out = path("rgb-\(UUID().uuidString).raw")
        try FF.ffmpeg(["-i", file] + (frame.map { ["-vf", "select=eq(n\\,\($0))"] } ?? [])
                      + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", out])
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// Mean absolute difference of two equal-sized RGB pictures (0…255).
    func difference(_ a: Data, _ b: Data) -> Double {
        guard a.count == b.count, !a.isEmpty else { return 255 }
        var sum = 0
        for i in 0..<a.count { sum += abs(Int(a[i]) - Int(b[i])) }
        return Double(sum) / Double(a.count)
    }

    func testMediaWhoseTimesDoNotStartAtZero() throws {
        let ts = path("cap.ts")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "1.5", "-c:v", "libx264", "-threads", "1", "-bf", "0", "-g", "15", "-pix_fmt", "yuv420p",
                       "-c:a", "aac", "-f", "mpegts", ts])
        let cap = path("cap.mkv")
        try FF.ffmpeg(["-copyts", "-i", ts, "-c", "copy", cap])
        let start = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0", cap]).stdout
        XCTAssertGreaterThan(Double(start.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 1, "the source should start late")
        let sourceFrames = try frames(cap)
        XCTAssertEqual(sourceFrames, 45)
        for (name, extra) in [("x.mp4", [String]()), ("copy.mp4", ["--copy"])] {
            let r = try run(["convert", cap, "-o", path(name)] + extra)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("cut short"), r.stderr)
            XCTAssertEqual(try frames(path(name)), sourceFrames, name)
            XCTAssertEqual(try warnings(path(name)), "", name)
        }
        // Times count from the file's start (the sound's, 0.021 s before the first picture),
        // as ffmpeg's -ss does: at 0 the first picture, at 1 s the one shown from 0.988 s (the 30th).
        for (at, frame) in [(0, 0), (1, 29)] {
            let png = path("at\(at).png")
            let r = try run(["thumbnail", cap, "--at", String(at), "-o", png])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertLessThan(difference(try rgb(png), try rgb(cap, frame: frame)), 2, "--at \(at): not picture \(frame) (\(r.stderr))")
        }
        XCTAssertGreaterThan(difference(try rgb(path("at0.png")), try rgb(path("at1.png"))), 5, "--at 0 and --at 1 gave the same picture")
        let every = try run(["thumbnail", cap, "--every", "0.5s", "-o", path("e-%d.png")])
        XCTAssertEqual(every.status, 0, every.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("e-") }.count, 4,
                       "0, 0.5, 1 and 1.5 s of a 1.53-s file")

        // Three million seconds in: the length is still 1.5 s.
        let shifted = path("shifted.mkv")
        try FF.ffmpeg(["-i", try makeMKV("plain.mkv"), "-c", "copy", "-output_ts_offset", "3000000", shifted])
        let sheet = path("sheet.png")
        let r = try run(["thumbnail", shifted, "--sheet", "3x1", "--size", "64x48", "-o", sheet])
        XCTAssertEqual(r.status, 0, r.stderr)
        let tiles = try rgb(sheet)
        XCTAssertEqual(tiles.count, 192 * 48 * 3)
        func tile(_ n: Int) -> Data {
            var d = Data()
            for y in 0..<48 { d.append(tiles[(y * 192 + n * 64) * 3 ..< (y * 192 + n * 64 + 64) * 3]) }
            return d
        }
        XCTAssertGreaterThan(difference(tile(0), tile(1)), 2, "tiles 1 and 2 are the same picture")
        XCTAssertGreaterThan(difference(tile(1), tile(2)), 2, "tiles 2 and 3 are the same picture")
        let convert = try run(["convert", shifted, "--copy", "-o", path("shifted.mp4")])
        XCTAssertEqual(convert.status, 0, convert.stderr)
    }

    func testCopyOfSoundThatStartsBeforeZero() throws {
        let plain = try makeMKV("plain.mkv")
        let early = path("early.mkv")
        try FF.ffmpeg(["-i", plain, "-c", "copy", "-output_ts_offset", "-0.05", "-avoid_negative_ts", "disabled", early])
        let out = path("early.mp4")
        let r = try run(["convert", early, "--copy", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try frames(out), try frames(plain))
        XCTAssertEqual(try warnings(out), "")
        // The pictures still start as far after the sound as in the source.
        func starts(_ file: String) throws -> [Double] {
            try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=start_time", "-of", "csv=p=0", file]).stdout
                .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        let a = try starts(plain), b = try starts(out)
        XCTAssertEqual(a.count, 2)
        XCTAssertEqual(b.count, 2)
        if a.count == 2 && b.count == 2 { XCTAssertEqual(b[0] - b[1], a[0] - a[1], accuracy: 0.002, "source \(a), copy \(b)") }
    }

    /// The times of `file`'s decoded pictures, from its start.
    func pictureTimes(_ file: String) throws -> [Double] {
        try Proc.run("ffprobe", ["-v", "quiet", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", file]).stdout
            .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// `file` cut to `share` of its bytes, as `head -c` would.
    func cut(_ file: String, to share: Double, as name: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let out = path(name)
        try data.prefix(Int(Double(data.count) * share)).write(to: URL(fileURLWithPath: out))
        return out
    }

    func testThumbnailOfAFileCutShort() throws {
        let cutShort = try cut(try makeMKV("whole.mkv"), to: 0.45, as: "cut.mkv")
        let times = try pictureTimes(cutShort)
        guard let last = times.last else { return XCTFail("nothing decodes in the cut file") }
        XCTAssertLessThan(last, 1.1, "the cut should leave well under the 1.5 s declared")
        let end = last + 1.0 / 30
        let inside = try run(["thumbnail", cutShort, "--at", String(format: "%.3f", last / 2), "-o", path("inside.png")])
        XCTAssertEqual(inside.status, 0, inside.stderr)
        let past = try run(["thumbnail", cutShort, "--at", "1.4", "-o", path("past.png")])
        XCTAssertEqual(past.status, 1, past.stderr)
        XCTAssertTrue(past.stderr.contains("no picture at 1.400 s") && past.stderr.contains("pictures end at"), past.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("past.png")), "a picture for a time after the last one")

        let sheet = path("sheet.png")
        let r = try run(["thumbnail", cutShort, "--sheet", "3x3", "--size", "64x48", "-o", sheet])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("left black"), r.stderr)
        let pixels = try rgb(sheet)
        XCTAssertEqual(pixels.count, 192 * 144 * 3)
        guard pixels.count == 192 * 144 * 3 else { return }
        let declared = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", cutShort]).stdout
        let duration = try XCTUnwrap(Double(declared.trimmingCharacters(in: .whitespacesAndNewlines)))
        for n in 0..<9 {
            let t = duration * Double(2 * n + 1) / 18
            // Tolerance of a millisecond's rounding either side of the last picture's end.
            if abs(t - end) < 0.002 { continue }
            var lit = 0
            for y in 0..<48 {
                let row = ((n / 3) * 48 + y) * 192 + (n % 3) * 64
                lit += pixels[row * 3 ..< (row + 64) * 3].filter { $0 != 0 }.count
            }
            if t > end {
                XCTAssertEqual(lit, 0, "tile \(n + 1) (\(t) s, after the last picture at \(last) s) is not black")
            } else {
                XCTAssertGreaterThan(lit, 1000, "tile \(n + 1) (\(t) s) has no picture")
            }
        }
    }

    func testRepairInPlaceChecksTheFileReachesItsEnd() throws {
        let whole = try makeMKV("whole.mkv")
        let cutShort = try cut(whole, to: 0.45, as: "cut.mkv")
        let last = try XCTUnwrap(try pictureTimes(cutShort).last)
        let r = try run(["repair", cutShort])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("nothing to repair"), r.stdout)
        let declared = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", cutShort]).stdout
        let duration = try XCTUnwrap(Double(declared.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertLessThan(duration, last + 0.2, "the repaired file should end where its packets do")
        XCTAssertEqual(try warnings(cutShort), "")

        let original = try Data(contentsOf: URL(fileURLWithPath: whole))
        let kept = try run(["repair", whole])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertTrue(kept.stdout.contains("nothing to repair"), kept.stdout)
        assertUnchanged(whole, original, "a complete file repaired in place")

        // A fragmented MP4 whose first fragment never came: its ftyp and moov only.
        let fragmented = path("fragmented.mp4")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "1", "-c:v", "libx264", "-threads", "1",
                       "-pix_fmt", "yuv420p", "-movflags", "frag_keyframe+empty_moov+default_base_moof", fragmented])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fragmented))
        func boxSize(at offset: Int) -> Int { bytes[offset ..< offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        let ftyp = boxSize(at: 0)
        XCTAssertEqual(String(decoding: bytes[ftyp + 4 ..< ftyp + 8], as: UTF8.self), "moov")
        let empty = path("empty.mp4")
        let header = bytes.prefix(ftyp + boxSize(at: ftyp))
        try header.write(to: URL(fileURLWithPath: empty))
        let refused = try run(["repair", empty])
        XCTAssertEqual(refused.status, 1, refused.stdout + refused.stderr)
        XCTAssertFalse(refused.stdout.contains("nothing to repair"), refused.stdout)
        assertUnchanged(empty, header, "an MP4 with no sample, not repairable")
    }

    func testKilledConvertToMP4IsRepairable() throws {
        let source = path("source.mkv")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-threads", "1", "-g", "15", "-c:a", "aac", "-ac", "1",
                       "-b:a", "32k", "-shortest", source])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let fifo = path("quiet.mkv")
        let out = path("killed.mp4")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Opened read-write, so opening does not wait for a reader; kept open: the writer is
        // idle once the first 80 % are in (a pipe of 1 MB holds them).
        let writer = open(fifo, O_RDWR)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        let share = Array(bytes.prefix(bytes.count * 4 / 5))
        XCTAssertGreaterThanOrEqual(fcntl(writer, 1031 /* F_SETPIPE_SZ */, Int32(1 << 20)), Int32(share.count), "a pipe big enough")
        XCTAssertEqual(Glibc.write(writer, share, share.count), share.count)
        let child = try spawnTracked(["convert", fifo, "--copy", "-o", out, "-q"])
        // Killed once a fragment (1 s) is in the file: what a crash leaves.
        let fragmented = Loopback.poll(timeout: 60) { ((try? topLevelBoxes(URL(fileURLWithPath: out))) ?? []).contains("moof") || child.exited() != nil }
        XCTAssertTrue(fragmented)
        XCTAssertNil(child.exited(), "ended before it was killed: \(child.currentStderr())")
        child.signal(SIGKILL)
        _ = child.wait(timeout: 30)
        XCTAssertGreaterThan(try frames(out), 0, "the killed conversion's file does not play")
        let r = try run(["repair", out])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let boxes = try topLevelBoxes(URL(fileURLWithPath: out))
        XCTAssertTrue(boxes.contains("moov") && !boxes.contains("moof"), "\(boxes)")
        // The first fragment is cut at the first packet that reaches 1 s, a sound packet as
        // often as a picture: it may hold 29 of the first 30 pictures (seen under ASan).
        XCTAssertGreaterThanOrEqual(try frames(out), 24, "about the first second")
        XCTAssertEqual(try warnings(out), "")

        let late = path("late.mkv")
        try FF.ffmpeg(["-itsoffset", "1", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=1", "-f", "lavfi",
                       "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-c:v", "libx264", "-preset", "ultrafast",
                       "-threads", "1", "-c:a", "aac", late])
        func videoStart(_ file: String) throws -> Double? {
            Double(try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time", "-of", "csv=p=0", file])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let expected = try XCTUnwrap(try videoStart(late))
        XCTAssertGreaterThan(expected, 0.9)
        for (name, extra) in [("late.mp4", [String]()), ("late-copy.mov", ["--copy"])] {
            let c = try run(["convert", late, "-o", path(name), "-q"] + extra)
            XCTAssertEqual(c.status, 0, c.stderr)
            XCTAssertEqual(try videoStart(path(name)) ?? 0, expected, accuracy: 0.04, "\(name): the pictures moved")
            XCTAssertEqual(try warnings(path(name)), "", name)
        }
    }
}
