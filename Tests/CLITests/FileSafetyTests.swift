import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// The rule for every file the program writes (the output, --stats-json, --timing-log, a
/// repaired file): symbolic links followed, only regular files written, an existing file
/// replaced only with --overwrite and only once the new one is complete, never a path that
/// is the same file as an input or another output, never a file we did not create removed.
/// Each case checks the file we did not create byte for byte. Everything happens in the
/// test's own directory (device nodes made there with mknod, when allowed).
final class FileSafetyTests: CLITestCase {

    func record(_ args: [String], frames: Int = 3) throws -> ProcessResult {
        try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--frames", "\(frames)", "-q"] + args, timeout: 60)
    }

    /// A file of recognisable bytes that must survive.
    func precious(_ name: String) throws -> (String, Data) {
        let p = path(name)
        let data = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try data.write(to: URL(fileURLWithPath: p))
        return (p, data)
    }

    /// Nothing but `expected` in the test directory: no partial or temporary files left.
    func assertDirectoryHolds(_ expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) {
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
        XCTAssertEqual(names, expected, "stray files", file: file, line: line)
    }

    func fileType(_ p: String) -> mode_t? {
        var st = stat()
        return lstat(p, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    /// Case 1 (and 12): a device node given as --stats-json or --timing-log is refused and
    /// stays a device; /dev/full is refused rather than silently not written.
    func testDeviceNodesAreNeverReplaced() throws {
        let node = path("mynull")
        guard mknod(node, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 else {   // makedev(1, 3): the null device
            throw XCTSkip("mknod not permitted here (needs CAP_MKNOD)")
        }
        for option in ["--stats-json", "--timing-log"] {
            let r = try record(["-o", path("a.mp4"), option, node])
            assertRefused(r, says: [option, "character device"], "\(option) on a device node")
            XCTAssertEqual(fileType(node), S_IFCHR, "\(option): the device node was replaced")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("a.mp4")), "\(option): recorded although refused")
            let full = try record(["-o", path("a.mp4"), option, "/dev/full", "-y"])
            assertRefused(full, says: [option, "/dev/full", "character device"], "\(option) /dev/full")
        }
        assertDirectoryHolds(["mynull"])
    }

    /// Case 2: a log on the recording itself (directly or through a link) is refused
    /// before anything is written, with or without --overwrite.
    func testALogOnTheOutputIsRefused() throws {
        let out = path("o.mp4")
        symlink(out, path("alias.csv"))
        for (option, target) in [("--stats-json", out), ("--timing-log", out), ("--timing-log", path("alias.csv"))] {
            for extra in [[], ["-y"]] {
                let r = try record(["-o", out, option, target] + extra)
                assertRefused(r, says: [option, "same file"], "\(option) \(target) \(extra)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: out))
            }
        }
        let (kept, data) = try precious("kept.mp4")
        let r = try record(["-o", kept, "--stats-json", kept, "-y"])
        assertRefused(r, says: ["same file"], "--stats-json on an existing output")
        assertUnchanged(kept, data, "--stats-json on the output")
    }

    /// Case 3: convert reading standard input that is the output file itself.
    func testConvertRefusesToWriteOverItsStandardInput() throws {
        let y4m = path("zz.mp4")
        var clip = Data("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n".utf8)
        for i in 0..<10 { clip += Data("FRAME\n".utf8) + Data(repeating: UInt8(i * 20), count: 64 * 48 * 3 / 2) }
        try clip.write(to: URL(fileURLWithPath: y4m))
        for extra in [[], ["-y"]] {
            let r = try Proc.run(binary, ["convert", "-", "-o", y4m] + extra, stdinPath: y4m, timeout: 60)
            assertRefused(r, says: ["same file as the input"], "convert - -o zz.mp4 < zz.mp4 \(extra)")
            assertUnchanged(y4m, clip, "convert over its standard input")
        }
        assertDirectoryHolds(["zz.mp4"])
    }

    /// Case 4: an existing output is refused without --overwrite, and with it survives every
    /// start-up error; a successful run with --overwrite replaces it with a complete file.
    func testAnExistingOutputSurvivesAndIsReplacedOnlyWhenComplete() throws {
        let (p, data) = try precious("precious.mp4")
        let plain = try record(["-o", p])
        assertRefused(plain, says: ["already exists", "--overwrite"], "existing output")
        assertUnchanged(p, data, "existing output without -y")

        let failing: [(String, [String])] = [
            ("a timing log in a missing directory", ["--timing-log", "/nonexistent-dir/t.csv"]),
            ("a picture size the encoder refuses", ["--size", "16384x16384"]),
            ("a scale the encoder refuses", ["--scale", "16384x16384"]),
        ]
        for (what, args) in failing {
            let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "3", "-q", "-y", "-o", p] + args, timeout: 60)
            assertRefused(r, says: [], what)
            assertUnchanged(p, data, what)
        }
        let raw = path("in.yuv")
        try Data(repeating: 128, count: 64 * 48 * 3 / 2 * 3).write(to: URL(fileURLWithPath: raw))
        let hevc = try Proc.run(binary, ["convert", raw, "--size", "64x48", "--codec", "hevc", "--crf", "63", "-y", "-q", "-o", p], timeout: 60)
        assertRefused(hevc, says: [], "convert --codec hevc --crf 63")
        assertUnchanged(p, data, "convert --codec hevc --crf 63")
        assertDirectoryHolds(["precious.mp4", "in.yuv"])

        let ok = try record(["-o", p, "-y"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(int(try FF.probe(p).stream["nb_read_frames"]), 3)
        assertDirectoryHolds(["precious.mp4", "in.yuv"])
    }

    /// Case 5: an output or a repaired file that is a symbolic link: the link stays, the
    /// file it names is written.
    func testSymbolicLinksAreFollowed() throws {
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        let target = path("real/target.mp4")
        let link = path("link.mp4")
        XCTAssertEqual(symlink("real/target.mp4", link), 0)
        let r = try record(["-o", link])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(fileType(link), S_IFLNK, "the link was replaced")
        XCTAssertEqual(int(try FF.probe(target).stream["nb_read_frames"]), 3)

        let again = try record(["-o", link, "-y"], frames: 5)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(fileType(link), S_IFLNK, "the link was replaced by --overwrite")
        XCTAssertEqual(int(try FF.probe(target).stream["nb_read_frames"]), 5)

        let repaired = try Proc.run(binary, ["repair", link], timeout: 60)
        XCTAssertEqual(repaired.status, 0, repaired.stderr)
        XCTAssertEqual(fileType(link), S_IFLNK, "repair replaced the link")
        XCTAssertEqual(int(try FF.probe(target).stream["nb_read_frames"]), 5)
        assertDirectoryHolds(["real", "link.mp4"])
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: path("real"))), ["target.mp4"])
    }

    /// Case 12: a log that cannot be written fails the run (the recording itself is kept).
    func testALogThatCannotBeWrittenFailsTheRun() throws {
        try FileManager.default.createDirectory(atPath: path("adir"), withIntermediateDirectories: true)
        let r = try record(["-o", path("a.mp4"), "--stats-json", path("adir")])
        assertRefused(r, says: ["--stats-json", "directory"], "--stats-json on a directory")
        let slash = try record(["-o", dir.path + "/b.mp4/"])
        assertRefused(slash, says: ["names a directory"], "-o ending in /")
        let missing = try record(["-o", path("c.mp4"), "--stats-json", path("no-such-dir/s.json")])
        assertRefused(missing, says: ["--stats-json", "does not exist"], "--stats-json in a missing directory")
        assertDirectoryHolds(["adir"])
        // A log that is a link: the link stays, the file it names gets the log.
        XCTAssertEqual(symlink("adir/stats.json", path("stats-link.json")), 0)
        let linked = try record(["-o", path("d.mp4"), "--stats-json", path("stats-link.json")])
        XCTAssertEqual(linked.status, 0, linked.stderr)
        XCTAssertEqual(fileType(path("stats-link.json")), S_IFLNK)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("adir/stats.json")))) as? [String: Any]
        XCTAssertEqual(int(json?["framesInFile"]), 3)
        XCTAssertEqual(int(json?["framesWritten"]), 3)
    }
}
