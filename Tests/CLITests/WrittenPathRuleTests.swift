import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31 ("Nothing lost, round 3"), the one rule (items 4-8) for every kind of path the tool
/// writes (WrittenPathTests holds the items themselves):
/// - testEveryWrittenPathFollowsTheOneRule: for every kind of path the tool writes (output,
///   --stats-json, --timing-log, HLS playlist, segment and init segment, convert's output,
///   repair -o, replay clips): a link to elsewhere followed, a FIFO refused, an existing
///   file refused without -y.
final class WrittenPathRuleTests: WrittenPathTestCase {
    /// One kind of path the tool writes: how to make a run write `name` (in the test
    /// directory), and how to tell what was written there.
    struct Kind {
        let what: String
        let name: String
        let args: (String) -> [String]
        let check: (String) -> Bool
    }

    func testEveryWrittenPathFollowsTheOneRule() throws {
        let synthetic = ["--source", "synthetic", "--size", "64x48", "--frames", "30", "-q"]
        try Data(repeating: 100, count: 64 * 48 * 3 / 2 * 3).write(to: URL(fileURLWithPath: path("in.yuv")))
        XCTAssertEqual(try record(["-o", path("in.mp4")]).status, 0)
        let media: (String) -> Bool = { (int(try? FF.probe($0).stream["nb_read_frames"]) ?? 0) > 0 }
        let text: (String) -> (String) -> Bool = { needle in { (try? String(contentsOfFile: $0, encoding: .utf8))?.contains(needle) == true } }
        let kinds: [Kind] = [
            Kind(what: "record's output", name: "k1.mp4", args: { synthetic + ["-o", $0] }, check: media),
            Kind(what: "--stats-json", name: "k2.json", args: { synthetic + ["-o", self.path("s2.mp4"), "--stats-json", $0] },
                 check: text("framesInFile")),
            Kind(what: "--timing-log", name: "k3.csv", args: { synthetic + ["-o", self.path("s3.mp4"), "--timing-log", $0] },
                 check: text("frame,pts")),
            Kind(what: "HLS playlist", name: "k4.m3u8", args: { synthetic + ["-o", self.path("s4.mp4"), "-o", $0] },
                 check: text("#EXT-X-ENDLIST")),
            Kind(what: "HLS segment", name: "k5-0.ts", args: { _ in synthetic + ["-o", self.path("s5.mp4"), "-o", self.path("k5.m3u8")] },
                 check: media),
            Kind(what: "HLS init segment", name: "k6-init.mp4",
                 args: { _ in synthetic + ["--hls-fmp4", "-o", self.path("s6.mp4"), "-o", self.path("k6.m3u8")] },
                 check: { p in FileManager.default.contents(atPath: p).map { $0.count > 8 && $0[4..<8] == Data("ftyp".utf8) } ?? false }),
            Kind(what: "convert's output", name: "k7.mp4", args: { ["convert", self.path("in.yuv"), "--size", "64x48", "-q", "-o", $0] },
                 check: media),
            Kind(what: "repair -o", name: "k8.mp4", args: { ["repair", self.path("in.mp4"), "-o", $0] }, check: media),
        ]
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        for kind in kinds {
            let p = path(kind.name)
            /// Everything a run made besides the name under test goes before the next run.
            func cleanUp() {
                for name in names() where !["in.yuv", "in.mp4", "real", kind.name].contains(name) {
                    try? FileManager.default.removeItem(atPath: path(name))
                }
            }
            // A link: followed (the link stays, its target gets what the run writes).
            let target = path("real/" + kind.name)
            XCTAssertEqual(symlink(target, p), 0)
            let linked = try Proc.run(binary, kind.args(p) + ["-y"], timeout: 60)
            XCTAssertEqual(linked.status, 0, "\(kind.what) through a link: \(linked.stderr)")
            XCTAssertEqual(fileType(p), S_IFLNK, "\(kind.what): the link was replaced")
            XCTAssertTrue(kind.check(target), "\(kind.what): the link's target was not written")
            unlink(p)
            cleanUp()
            // A FIFO: refused, with or without -y, and still a FIFO.
            XCTAssertEqual(mkfifo(p, 0o644), 0)
            for extra in [[], ["-y"]] {
                let r = try Proc.run(binary, kind.args(p) + extra, timeout: 60)
                assertRefused(r, says: [kind.name, "FIFO"], "\(kind.what) on a FIFO \(extra)")
                XCTAssertEqual(fileType(p), S_IFIFO, "\(kind.what): the FIFO was replaced")
                cleanUp()
            }
            unlink(p)
            // An existing file: refused without -y, untouched.
            let (existing, data) = try precious(kind.name)
            let r = try Proc.run(binary, kind.args(p), timeout: 60)
            assertRefused(r, says: [kind.name, "already exists"], "\(kind.what) over an existing file")
            assertUnchanged(existing, data, kind.what)
            unlink(p)
            cleanUp()
        }
        // Replay clips are always new names (NAME-replay-DATE-TIME.EXT, then -2, -3, …):
        // a FIFO there is refused, an existing file skipped, never replaced.
        let start = Int(Date().timeIntervalSince1970)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        var fifos: [String] = [], kept: [(String, Data)] = []
        for t in (start - 2)...(start + 60) {
            let stamp = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(t)))
            let fifo = path("r-replay-\(stamp).mp4")
            XCTAssertEqual(mkfifo(fifo, 0o644), 0)
            fifos.append(fifo)
            kept.append(try precious("q-replay-\(stamp).mp4"))
        }
        for (stem, expect, status) in [("r", "FIFO", Int32(1)), ("q", "saved the last", Int32(0))] {
            let log = path("\(stem).csv")
            let child = try spawnTracked(["--source", "synthetic", "--size", "64x48", "--realtime", "--duration", "3",
                                          "--replay-buffer", "1s", "-q", "-o", path("\(stem).mp4"), "--timing-log", log])
            XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 30))
            child.signal(SIGUSR2)
            let r = child.wait(timeout: 60)
            XCTAssertEqual(r.status, status, "a replay not saved fails the run: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(expect), "replay beside \(stem).mp4: '\(expect)' missing from \(r.stderr)")
        }
        for fifo in fifos { XCTAssertEqual(fileType(fifo), S_IFIFO, "a replay clip replaced the FIFO \(fifo)") }
        for (p, data) in kept { assertUnchanged(p, data, "a replay clip") }
        let clip = try XCTUnwrap(names().first { $0.hasPrefix("q-replay-") && $0.hasSuffix("-2.mp4") }, "no clip saved as -2")
        XCTAssertTrue(media(path(clip)))
    }
}
