import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31 ("Nothing lost, round 3"), the paths the tool writes. Catalogue:
/// - testHLSNeverWritesOverFilesItDidNotCreate: a user's live-0.ts, live-init.mp4, a
///   live-0.ts link to elsewhere, roll-0.ts/roll-5.ts under a rolling playlist: refused
///   without -y, untouched; with -y replaced but never deleted, and only our own segments
///   rolled away (item 4).
/// - testHLSNamesMayNotCollideWithTheRunsOwnFiles: -o d-init.mp4 with --hls-fmp4 d.m3u8,
///   --timing-log d-0.ts, --stats-json d.m3u8 / d.m3u8.tmp: refused before anything is written (item 5).
/// - testHLSPlaylistLinksAreFollowedAndFIFOsRefused: -y keeps link.m3u8 a link (the
///   playlist written to its target) and refuses fifo.m3u8 (item 6).
/// - testHLSDirectoryIsCheckedBeforeRecording: a missing or read-only directory, or a name
///   with '%' (which FFmpeg's segment pattern would misread), is refused before recording,
///   no file made (item 16).
/// - testPathsAreBytes: -o y\xff.mp4 -y leaves y\u{FFFD}.mp4 alone and writes the name
///   given; x\xff.mp4, an HLS playlist h\xff.m3u8 and convert z\xff.yuv likewise (item 7).
/// - testConcurrentRunsNeverTakeEachOthersFile: a -y run on a file another run is writing is
///   refused; a file replaced by another program under a -y run or a new-file run is left
///   alone and the run's own recording kept under its partial name, exit 1 (item 8).
final class WrittenPathTests: WrittenPathTestCase {
    // MARK: - Item 4

    func testHLSNeverWritesOverFilesItDidNotCreate() throws {
        let cases: [(String, [String])] = [("live-0.ts", []), ("live-init.mp4", ["--hls-fmp4"]), ("live-7.m4s", ["--hls-fmp4"])]
        for (name, extra) in cases {
            let (p, data) = try precious(name)
            let r = try record(["-o", path("a.mp4"), "-o", path("live.m3u8")] + extra)
            assertRefused(r, says: [name, "already exists"], "a user's \(name)")
            assertUnchanged(p, data, name)
            XCTAssertEqual(names(), [name], "\(name): something was written")
            unlink(p)
        }
        // A segment name that is a link to a file elsewhere: that file is not written.
        try FileManager.default.createDirectory(atPath: path("elsewhere"), withIntermediateDirectories: true)
        let (outside, outsideData) = try precious("elsewhere/outside.txt")
        XCTAssertEqual(symlink(outside, path("live-0.ts")), 0)
        let linked = try record(["-o", path("a.mp4"), "-o", path("live.m3u8")])
        assertRefused(linked, says: ["live-0.ts", "already exists"], "live-0.ts -> outside.txt")
        assertUnchanged(outside, outsideData, "the target of live-0.ts")
        XCTAssertEqual(fileType(path("live-0.ts")), S_IFLNK)
        unlink(path("live-0.ts"))

        // A rolling playlist among a user's roll-0.ts and roll-5.ts: refused without -y.
        let (r0, d0) = try precious("roll-0.ts", "zero"), (r5, d5) = try precious("roll-5.ts", "five")
        let plain = try record(["-o", path("a.mp4"), "-o", path("roll.m3u8"), "--hls-list-size", "1"], frames: 420)
        assertRefused(plain, says: ["roll-0.ts", "already exists"], "a rolling playlist over roll-0.ts")
        assertUnchanged(r0, d0, "roll-0.ts")
        assertUnchanged(r5, d5, "roll-5.ts")
        XCTAssertEqual(names(), ["roll-0.ts", "roll-5.ts", "elsewhere"])
        // With -y they may be replaced (2 s segments: 0 to 6), never deleted; the segments
        // this run created roll away (all but the listed one and one more).
        let y = try record(["-o", path("a.mp4"), "-o", path("roll.m3u8"), "--hls-list-size", "1", "-y"], frames: 420)
        XCTAssertEqual(y.status, 0, y.stderr)
        let numbers = Set(names().filter { $0.hasPrefix("roll-") && $0.hasSuffix(".ts") }.compactMap { Int($0.dropFirst(5).dropLast(3)) })
        XCTAssertTrue(numbers.isSuperset(of: [0, 5]), "a file this run did not create was deleted: \(numbers.sorted())")
        let last = numbers.max() ?? 0
        XCTAssertGreaterThanOrEqual(last, 6, "\(numbers.sorted())")
        XCTAssertEqual(numbers.subtracting([0, 5]).filter { $0 < last - 1 }, [], "own old segments were kept: \(numbers.sorted())")
        for name in ["roll-0.ts", "roll-5.ts"] {
            XCTAssertEqual(FileManager.default.contents(atPath: path(name))?.first, 0x47, "\(name) was not replaced by a segment with -y")
        }
        let listed = try String(contentsOfFile: path("roll.m3u8"), encoding: .utf8).split(separator: "\n").filter { $0.hasSuffix(".ts") }
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(try Proc.run("ffmpeg", ["-v", "error", "-i", path("roll.m3u8"), "-f", "null", "-"]).status, 0)
    }

    // MARK: - Item 5

    func testHLSNamesMayNotCollideWithTheRunsOwnFiles() throws {
        let cases: [([String], String)] = [
            (["--hls-fmp4", "-o", path("d-init.mp4"), "-o", path("d.m3u8")], "init segment"),
            (["--timing-log", path("d-0.ts"), "-o", path("a.mp4"), "-o", path("d.m3u8")], "segments"),
            (["--stats-json", path("d.m3u8"), "-o", path("a.mp4"), "-o", path("d.m3u8")], "same file"),
            (["--stats-json", path("d.m3u8.tmp"), "-o", path("a.mp4"), "-o", path("d.m3u8")], "temporary playlist"),
            (["--timing-log", path("d-12.m4s"), "--hls-fmp4", "-o", path("a.mp4"), "-o", path("d.m3u8")], "segments"),
        ]
        for (args, says) in cases {
            for extra in [[], ["-y"]] {
                let r = try record(args + extra, frames: 60)
                assertRefused(r, says: [says], "\(args) \(extra)")
                XCTAssertEqual(names(), [], "\(args) \(extra): something was written")
            }
        }
    }

    // MARK: - Item 6

    func testHLSPlaylistLinksAreFollowedAndFIFOsRefused() throws {
        let (outside, data) = try precious("outside.txt")
        XCTAssertEqual(symlink("outside.txt", path("link.m3u8")), 0)
        let r = try record(["-o", path("a.mp4"), "-o", path("link.m3u8"), "-y"], frames: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(fileType(path("link.m3u8")), S_IFLNK, "the link was replaced")
        XCTAssertNotEqual(try? Data(contentsOf: URL(fileURLWithPath: outside)), data, "the playlist did not go to the link's target")
        XCTAssertTrue(try String(contentsOfFile: outside, encoding: .utf8).contains("#EXT-X-ENDLIST"))
        XCTAssertEqual(frames(path("link.m3u8")), 60)

        XCTAssertEqual(mkfifo(path("fifo.m3u8"), 0o644), 0)
        for extra in [[], ["-y"]] {
            let f = try record(["-o", path("b.mp4"), "-o", path("fifo.m3u8")] + extra, frames: 30)
            assertRefused(f, says: ["fifo.m3u8", "FIFO"], "fifo.m3u8 \(extra)")
            XCTAssertEqual(fileType(path("fifo.m3u8")), S_IFIFO, "the FIFO was replaced")
        }
        XCTAssertFalse(names().contains("b.mp4"))
    }

    // MARK: - Item 16

    func testHLSDirectoryIsCheckedBeforeRecording() throws {
        var readOnly = path("ro")
        if getuid() == 0 {
            readOnly = "/proc/sys"   // not writable even for root
        } else {
            try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
            chmod(readOnly, 0o555)
        }
        defer { chmod(path("ro"), 0o755) }
        for (playlist, says) in [(path("missing/live.m3u8"), "does not exist"), (readOnly + "/live.m3u8", "not writable")] {
            let start = Date()
            let r = try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--realtime", "--duration", "20", "-q",
                                          "-o", path("a.mp4"), "-o", playlist], timeout: 60)
            assertRefused(r, says: [playlist, says], playlist)
            XCTAssertLessThan(Date().timeIntervalSince(start), 15, "\(playlist): found only after recording")
            XCTAssertFalse(names().contains("a.mp4"), "\(playlist): recorded although the playlist cannot be written")
            unlink(path("a.mp4"))
        }
        // A name FFmpeg's HLS muxer would read as a number pattern (it does not undo %%) is
        // refused before recording too.
        let percent = try record(["-o", path("a.mp4"), "-o", path("p%d.m3u8")], frames: 30)
        assertRefused(percent, says: ["p%d.m3u8", "'%'"], "a playlist named p%d.m3u8")
        XCTAssertEqual(names(), [])
    }

    // MARK: - Item 7

    /// Runs swift-record through sh, so that arguments can hold bytes that are not UTF-8
    /// (printf escapes); `$SR` is the binary, `$D` the test directory.
    func shell(_ script: String) throws -> ProcessResult {
        try Proc.run("/bin/sh", ["-c", "SR=\"$0\"; D=\"$1\"; cd \"$D\" && " + script, binary, dir.path], timeout: 60)
    }

    /// The directory's names as bytes.
    func rawNames() -> Set<[UInt8]> {
        guard let d = opendir(dir.path) else { return [] }
        defer { closedir(d) }
        var out: Set<[UInt8]> = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name != [0x2E] && name != [0x2E, 0x2E] { out.insert(name) }
        }
        return out
    }

    func testPathsAreBytes() throws {
        let (replacement, data) = try precious("y\u{FFFD}.mp4")
        let y = try shell(#"$SR --source synthetic --size 64x48 --frames 3 -q -o "$(printf 'y\377.mp4')" -y"#)
        XCTAssertEqual(y.status, 0, y.stderr)
        assertUnchanged(replacement, data, "y\u{FFFD}.mp4 (an unrelated file)")
        let yRaw: [UInt8] = [0x79, 0xFF] + Array(".mp4".utf8)
        XCTAssertTrue(rawNames().contains(yRaw), "y\\xff.mp4 was not written")
        XCTAssertEqual(try shell(#"ln "$(printf 'y\377.mp4')" check-y.mp4"#).status, 0)
        XCTAssertEqual(frames(path("check-y.mp4")), 3)

        let x = try shell(#"$SR --source synthetic --size 64x48 --frames 4 -q -o "$(printf 'x\377.mp4')""#)
        XCTAssertEqual(x.status, 0, x.stderr)
        XCTAssertEqual(try shell(#"ln "$(printf 'x\377.mp4')" check-x.mp4"#).status, 0, "x\\xff.mp4 is not where asked")
        XCTAssertEqual(frames(path("check-x.mp4")), 4)
        // Refused the second time: the existing raw name is seen as existing.
        let again = try shell(#"$SR --source synthetic --size 64x48 --frames 4 -q -o "$(printf 'x\377.mp4')""#)
        XCTAssertNotEqual(again.status, 0)

        // HLS: the playlist's name gives the segments' names, byte for byte.
        let h = try shell(#"$SR --source synthetic --size 64x48 --frames 30 -q -o a.mp4 -o "$(printf 'h\377.m3u8')""#)
        XCTAssertEqual(h.status, 0, h.stderr)
        XCTAssertTrue(rawNames().contains([0x68, 0xFF] + Array(".m3u8".utf8)), "h\\xff.m3u8 missing")
        XCTAssertTrue(rawNames().contains([0x68, 0xFF] + Array("-0.ts".utf8)), "h\\xff-0.ts missing")

        try Data(repeating: 128, count: 64 * 48 * 3 / 2 * 5).write(to: URL(fileURLWithPath: path("plain.yuv")))
        XCTAssertEqual(try shell(#"mv plain.yuv "$(printf 'z\377.yuv')""#).status, 0)
        let z = try shell(#"$SR convert "$(printf 'z\377.yuv')" --size 64x48 -q"#)
        XCTAssertEqual(z.status, 0, z.stderr)
        XCTAssertEqual(try shell(#"ln "$(printf 'z\377.mp4')" check-z.mp4"#).status, 0, "convert did not write z\\xff.mp4")
        XCTAssertEqual(frames(path("check-z.mp4")), 5)
        XCTAssertFalse(rawNames().contains(Array("z\u{FFFD}.mp4".utf8)))
    }

    // MARK: - Item 8

    /// Waits (up to 30 s) until `condition` holds; false if it never does.
    func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return false
    }

    func testConcurrentRunsNeverTakeEachOthersFile() throws {
        let same = path("same.mp4")
        // A run is writing same.mp4 (it exists from the moment the run starts writing): a
        // second run with -y does not replace it.
        let first = try spawnTracked(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "3", "-q", "-o", same, "-y"])
        XCTAssertTrue(waitFor { fileType(same) != nil })
        let second = try record(["-o", same, "-y"], frames: 105)
        assertRefused(second, says: ["same.mp4", "another swift-record"], "a -y run on a file being written")
        let a = first.wait(timeout: 60)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(int(try FF.probe(same).stream["width"]), 320)
        XCTAssertGreaterThanOrEqual(frames(same) ?? 0, 80)
        XCTAssertEqual(names(), ["same.mp4"])

        // A -y run whose destination is replaced by another program meanwhile.
        let replacing = try spawnTracked(["--source", "synthetic", "--size", "64x48", "--realtime", "--duration", "3", "-q", "-o", same, "-y"])
        XCTAssertTrue(waitFor { names().contains { $0.hasPrefix("same.partial-") } })
        let (foreign, foreignData) = try precious("foreign")
        XCTAssertEqual(rename(foreign, same), 0)
        let b = replacing.wait(timeout: 60)
        assertRefused(b, says: ["same.mp4", "changed", "same.partial-"], "destination replaced during a -y run")
        assertUnchanged(same, foreignData, "the file another program put there")
        let partial = try XCTUnwrap(names().first { $0.hasPrefix("same.partial-") })
        XCTAssertTrue(b.stderr.contains(partial), b.stderr)
        XCTAssertGreaterThanOrEqual(frames(path(partial)) ?? 0, 60)

        // A new file whose name is taken over while it is written: kept under a partial name.
        let new = path("new.mp4")
        let creating = try spawnTracked(["--source", "synthetic", "--size", "64x48", "--realtime", "--duration", "3", "-q", "-o", new])
        XCTAssertTrue(waitFor { fileType(new) != nil })
        let (other, otherData) = try precious("other")
        XCTAssertEqual(rename(other, new), 0)
        let c = creating.wait(timeout: 60)
        assertRefused(c, says: ["new.mp4", "replaced by another file", "new.partial-"], "new file replaced while written")
        assertUnchanged(new, otherData, "the file another program put at new.mp4")
        let kept = try XCTUnwrap(names().first { $0.hasPrefix("new.partial-") })
        XCTAssertTrue(c.stderr.contains(kept), c.stderr)
        XCTAssertGreaterThanOrEqual(frames(path(kept)) ?? 0, 60)
    }
}

/// What the written-path classes share: a short synthetic recording, bytes that must survive,
/// the directory's names, a path's type and frame count.
class WrittenPathTestCase: CLITestCase {
    func record(_ args: [String], frames: Int = 3) throws -> ProcessResult {
        try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--frames", "\(frames)", "-q"] + args, timeout: 60)
    }

    /// Recognisable bytes that must survive.
    func precious(_ name: String, _ text: String = "precious") throws -> (String, Data) {
        let p = name.hasPrefix("/") ? name : path(name)
        let data = Data((text + "\n").utf8) + Data((0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try data.write(to: URL(fileURLWithPath: p))
        return (p, data)
    }

    func names(_ directory: String? = nil) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory ?? dir.path)) ?? [])
    }

    func fileType(_ p: String) -> mode_t? {
        var st = stat()
        return lstat(p, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    func frames(_ p: String) -> Int? { int(try? FF.probe(p).stream["nb_read_frames"]) }
}
