import Foundation
import TestSupport
import XCTest

/// Damage-driven capture (`--capture damage`, the default) against whole grabs
/// (`--capture full`): the same deterministic workloads give the same decoded frames.
///
/// Timing is taken out of the comparison by the hidden `--simulate-x11-workload`: before
/// each grab the recorder paints the workload's next step on the display and waits for the
/// server, and takes frames as fast as the encoder does (no clock), so frame n of either
/// file shows step n however busy the machine is. FFV1 is lossless and `--threads 1`
/// deterministic, so equal pictures give equal decoded frames (`ffmpeg -f framemd5`).
final class DamageCaptureTests: XvfbTestCase {
    /// Records `args` on `server` with sound off; fails the test on a non-zero exit.
    @discardableResult
    func record(_ args: [String], on server: XvfbServer? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let s = try XCTUnwrap(server ?? xvfb)
        let r = try Proc.run(binary, args + ["--audio", "none", "--overwrite"], environment: s.environment, timeout: 120)
        XCTAssertEqual(r.status, 0, "swift-record \(args.joined(separator: " ")) failed: \(r.stderr)", file: file, line: line)
        return r
    }

    /// The MD5 of every decoded frame.
    func frameHashes(_ path: String) throws -> [String] {
        let r = try Proc.run("ffmpeg", ["-v", "error", "-i", path, "-f", "framemd5", "-"], timeout: 120)
        guard r.status == 0 else { throw TestError.failed("ffmpeg framemd5 \(path): \(r.stderr)") }
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// The `grabs` object of a `--stats-json` file, if there is one.
    func grabs(_ path: String) throws -> [String: Int]? {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        return json?["grabs"] as? [String: Int]
    }

    func testDamageRecordingsMatchFullGrabsFrameForFrame() throws {
        // (workload, extra options, fewest distinct frames the workload must show)
        try compareDamageWithFullGrabs([
            ("still", [], 1), ("terminal", [], 24), ("cursor", [], 12), ("mixed", ["--region", "31,17,1001,603"], 24),
            ("motion", [], 24),
        ])
    }

    /// Without MIT-SHM (rectangles through `XGetImage`) and with 16-bit pixels (converted to BGRA).
    func testDamageMatchesFullGrabsThroughXGetImageAt16Bits() throws {
        let server = try XvfbServer(size: "800x600", depth: 16, extraArguments: ["-extension", "MIT-SHM"])
        defer { server.stop() }
        try compareDamageWithFullGrabs([("mixed", [], 24)], on: server)
    }

    func compareDamageWithFullGrabs(_ cases: [(String, [String], Int)], on server: XvfbServer? = nil,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        let frames = 24
        for (workload, extra, distinct) in cases {
            var hashes: [String: [String]] = [:]
            for method in ["full", "damage"] {
                let out = dir.appendingPathComponent("\(workload)-\(method).mkv").path
                let stats = dir.appendingPathComponent("\(workload)-\(method).json").path
                try record(["--simulate-x11-workload", workload, "--capture", method, "--frames", "\(frames)", "--codec", "ffv1",
                            "--threads", "1", "--quiet", "--stats-json", stats, "-o", out] + extra, on: server, file: file, line: line)
                hashes[method] = try frameHashes(out)
                let counts = try grabs(stats)
                if method == "full" {
                    XCTAssertNil(counts, "\(workload): whole grabs report no damage counts")
                    continue
                }
                let c = try XCTUnwrap(counts, "\(workload): --stats-json has no grabs")
                XCTAssertEqual(c["pictures"], frames, workload)
                XCTAssertEqual(c["fullGrabs"].map { $0 + (c["partialGrabs"] ?? 0) + (c["unchanged"] ?? 0) }, frames, workload)
                switch workload {
                case "still": XCTAssertEqual(c["unchanged"], frames - 1, "a still screen is grabbed once")
                case "terminal": XCTAssertEqual(c["partialGrabs"], frames - 1, "only the terminal is grabbed after the first frame")
                case "cursor": XCTAssertGreaterThan(c["unchanged"] ?? 0, 0, "the pointer stands still on some steps")
                case "motion": XCTAssertEqual(c["fullGrabs"], frames, "a screen that changes everywhere is grabbed whole")
                default: break
                }
                if workload != "motion" {
                    XCTAssertLessThan(c["grabbedPixels"] ?? .max, frames * (c["picturePixels"] ?? 0) / 2, "\(workload): \(c)")
                }
            }
            let full = try XCTUnwrap(hashes["full"]), damage = try XCTUnwrap(hashes["damage"])
            XCTAssertEqual(full.count, frames, workload)
            XCTAssertEqual(Set(full).count >= distinct, true, "\(workload): only \(Set(full).count) distinct frames")
            XCTAssert(damage == full, "\(workload): damage-driven frames differ from whole grabs at frames "
                           + "\(zip(full, damage).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset))")
        }
    }

    /// A live recording of a screen where nothing happens grabs once; every later tick
    /// gives the same picture back untouched.
    func testUnchangedScreenIsGrabbedOnce() throws {
        let out = dir.appendingPathComponent("still.mkv").path, stats = dir.appendingPathComponent("still.json").path
        try record(["--frames", "15", "--codec", "ffv1", "--quiet", "--stats-json", stats, "-o", out])
        let c = try XCTUnwrap(try grabs(stats), "--stats-json has no grabs")
        let pictures = try XCTUnwrap(c["pictures"])
        XCTAssertGreaterThan(pictures, 0)
        XCTAssertEqual(c["fullGrabs"], 1, "\(c)")
        XCTAssertEqual(c["partialGrabs"], 0, "\(c)")
        XCTAssertEqual(c["unchanged"], pictures - 1, "\(c)")
        XCTAssertEqual(c["grabbedPixels"], c["picturePixels"], "\(c)")
        // However many frames a busy machine let through, they all show the one picture.
        let hashes = try frameHashes(out)
        XCTAssertGreaterThan(hashes.count, 0)
        XCTAssertEqual(Set(hashes).count, 1, "\(hashes)")
    }

    /// `--frame-rate-mode content` on a still screen: the ticks that show nothing new are
    /// left out, the file is as long as the recording, and key frames still come every
    /// key-frame interval (2 s).
    func testContentFrameRateLeavesOutTheStillTicks() throws {
        let out = dir.appendingPathComponent("content.mp4").path, stats = dir.appendingPathComponent("content.json").path
        try record(["--frame-rate-mode", "content", "--duration", "4", "--quiet", "--stats-json", stats, "-o", out])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let written = try XCTUnwrap(json["framesWritten"] as? Int), unchanged = try XCTUnwrap(json["ticksUnchanged"] as? Int)
        XCTAssertEqual(json["framesInFile"] as? Int, written, "\(json)")
        XCTAssertGreaterThan(unchanged, 0, "\(json)")
        XCTAssertLessThan(written, 60, "most of the 120 ticks show nothing new: \(json)")
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", out])
        let keys = r.stdout.split(separator: "\n").compactMap { line -> Double? in
            let f = line.split(separator: ",")
            return f.count >= 2 && f[1].hasPrefix("K") ? Double(f[0]) : nil
        }.sorted()
        XCTAssertEqual(keys.first, 0)
        XCTAssertLessThanOrEqual(zip(keys.dropFirst(), keys).map { $0 - $1 }.max() ?? 99, 2.0 + 1.5 / 30, "\(keys)")
        let d = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", out])
        XCTAssertEqual(Double(d.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 4.0, accuracy: 0.04)
        let check = try Proc.run("ffmpeg", ["-v", "warning", "-i", out, "-f", "null", "-"], timeout: 120)
        XCTAssertEqual(check.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "decodes without a warning")
    }

    /// Without XDamage the recorder grabs whole pictures, and says so once.
    func testWithoutXDamageGrabsWholePicturesAndSaysSoOnce() throws {
        let server = try XvfbServer(size: "320x240", extraArguments: ["-extension", "DAMAGE"])
        defer { server.stop() }
        let out = dir.appendingPathComponent("plain.mkv").path, stats = dir.appendingPathComponent("plain.json").path
        let r = try record(["--frames", "3", "--codec", "ffv1", "--quiet", "--stats-json", stats, "-o", out], on: server)
        XCTAssertEqual(r.stderr.components(separatedBy: "no XDamage extension").count - 1, 1, r.stderr)
        XCTAssertNil(try grabs(stats))
        XCTAssertEqual(try frameHashes(out).count, 3)
        // Asked for whole grabs, nothing to say.
        let quiet = try record(["--capture", "full", "--frames", "1", "--codec", "ffv1", "--quiet", "-o", out], on: server)
        XCTAssertFalse(quiet.stderr.contains("XDamage"), quiet.stderr)
        // Damage asked for with --scale (on a server that has XDamage): whole grabs, said once.
        let scaled = try record(["--capture", "damage", "--scale", "640x360", "--frames", "1", "--codec", "ffv1", "--quiet",
                                 "--stats-json", stats, "-o", out])
        XCTAssertEqual(scaled.stderr.components(separatedBy: "does not apply with --scale").count - 1, 1, scaled.stderr)
        XCTAssertNil(try grabs(stats))
    }
}
