import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Nothing lost: killed recordings stay playable and repairable; write errors end the
/// recording with a clear message and what was written kept.
final class CrashSafetyTests: CLITestCase {

    /// Hashes of the decoded pictures, one per decoded frame (no frame-rate conversion).
    func decodedFrameHashes(_ path: String) throws -> [String] {
        FF.hashes(try FF.framemd5(path, outputArgs: ["-map", "0:v", "-fps_mode", "passthrough"]))
    }

    /// Seconds of video that decode: the end of the last decodable frame.
    func decodedSeconds(_ path: String) throws -> Double {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time,pkt_duration_time",
                                         "-of", "csv=p=0", path])
        XCTAssertTrue(r.succeeded, "ffprobe opens \(path): \(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { line -> Double? in
            let f = line.split(separator: ",").compactMap { Double($0) }
            return f.count == 2 ? f[0] + f[1] : f.first
        }.max() ?? 0
    }

    func decodedFrameCount(_ path: String) throws -> Int {
        let r = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                         "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        XCTAssertTrue(r.succeeded, "ffprobe opens \(path): \(r.stderr)")
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// SIGKILL at ten moments between 1 s and 6 s: every file opens, holds at least
    /// (kill time − 2 s) of video, and `repair` makes an ordinary MP4 of the same frames.
    func testKilledRecordingsArePlayableAndRepairable() throws {
        let killTimes = [1.0, 1.6, 2.1, 2.7, 3.2, 3.8, 4.3, 4.9, 5.4, 5.95]
        // Two batches of five recordings at once keep the test short without starving the machine.
        for batch in [Array(killTimes.prefix(5)), Array(killTimes.suffix(5))] {
            var children: [(Double, String, ChildProcess)] = []
            for t in batch {
                let out = dir.appendingPathComponent("kill-\(t).mp4").path
                children.append((t, out, try Proc.spawn(binary, ["--source", "synthetic", "--size", "640x360", "--realtime",
                                                                 "--duration", "60", "--quiet", "-o", out])))
            }
            let start = Date()
            for (t, _, child) in children.sorted(by: { $0.0 < $1.0 }) {
                let wait = t - Date().timeIntervalSince(start)
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                child.signal(SIGKILL)
            }
            for (t, out, child) in children {
                child.wait(timeout: 10)
                let frames = try decodedFrameCount(out)
                let seconds = try decodedSeconds(out)
                XCTAssertGreaterThanOrEqual(seconds, t - 2, "killed at \(t) s: \(frames) frames, \(seconds) s decodable")
                guard frames > 0 else { continue }
                let before = try decodedFrameHashes(out)
                let fixed = out.replacingOccurrences(of: ".mp4", with: "-fixed.mp4")
                let r = try Proc.run(binary, ["repair", out, "-o", fixed])
                XCTAssertEqual(r.status, 0, "repair after kill at \(t) s: \(r.stderr)")
                XCTAssertEqual(try decodedFrameHashes(fixed), before, "repair keeps the decodable frames (kill at \(t) s)")
                let boxes = try topLevelBoxes(URL(fileURLWithPath: fixed))
                XCTAssertFalse(boxes.contains("moof"), "repaired file is not fragmented: \(boxes)")
                XCTAssertLessThan(try XCTUnwrap(boxes.firstIndex(of: "moov")), try XCTUnwrap(boxes.firstIndex(of: "mdat")))
            }
        }
    }

    func testKilledMKVIsPlayable() throws {
        let out = dir.appendingPathComponent("kill.mkv").path
        let child = try Proc.spawn(binary, ["--source", "synthetic", "--size", "640x360", "--realtime", "--duration", "60", "--quiet", "-o", out])
        Thread.sleep(forTimeInterval: 3.5)
        child.signal(SIGKILL)
        child.wait(timeout: 10)
        XCTAssertGreaterThanOrEqual(try decodedSeconds(out), 1.5)
    }

    /// A normal finish with fragments gives an ordinary MP4, moov first, with the same
    /// decoded frames as a recording made without fragments.
    func testFinishedFragmentedRecordingIsOrdinary() throws {
        let frag = dir.appendingPathComponent("frag.mp4").path, plain = dir.appendingPathComponent("plain.mp4").path
        for (out, extra) in [(frag, [String]()), (plain, ["--no-fragments"])] {
            let r = try Proc.run(binary, ["--source", "synthetic", "--size", "640x360", "--frames", "90", "--threads", "1", "--quiet", "-o", out] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let boxes = try topLevelBoxes(URL(fileURLWithPath: frag))
        XCTAssertFalse(boxes.contains("moof"), "\(boxes)")
        XCTAssertLessThan(try XCTUnwrap(boxes.firstIndex(of: "moov")), try XCTUnwrap(boxes.firstIndex(of: "mdat")))
        XCTAssertEqual(try FF.framemd5(frag, outputArgs: ["-map", "0:v"]), try FF.framemd5(plain, outputArgs: ["-map", "0:v"]))
        let (_, f) = try FF.probe(frag)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 3.0, accuracy: 0.001)
    }

    /// A full disk ends the recording quickly with the path and the system's reason, exit
    /// non-zero, and the fragments written before stay playable.
    func testDiskFullStopsWithClearErrorAndKeepsWhatWasWritten() throws {
        let mountPoint = dir.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Proc.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint])
        try XCTSkipUnless(mount.succeeded, "cannot mount a small tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? Proc.run("umount", [mountPoint]) }
        let out = mountPoint + "/full.mp4"
        let start = Date()
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "1280x720", "--bitrate", "8M", "--realtime",
                                      "--duration", "60", "--quiet", "-o", out], timeout: 60)
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains(out), r.stderr)
        XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
        // 3 MB at 8 Mbit/s fill in about 3 s; the recorder must notice and stop promptly.
        XCTAssertLessThan(elapsed, 3 + 2 + 2, "stopped within 2 s of the failure")
        XCTAssertGreaterThan(try decodedFrameCount(out), 15, "earlier frames playable")
    }

    func testWriteErrorOnDevFull() throws {
        let link = dir.appendingPathComponent("devfull.mp4").path
        XCTAssertEqual(symlink("/dev/full", link), 0)
        let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "300", "--quiet", "-o", link], timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
        XCTAssertTrue(r.stderr.contains(link), r.stderr)
    }

    func testRepairRefusesWhatCannotBeRepaired() throws {
        let garbage = dir.appendingPathComponent("garbage.mp4").path
        _ = FileManager.default.createFile(atPath: garbage, contents: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        let r = try Proc.run(binary, ["repair", garbage])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot be repaired") || r.stderr.contains("no readable"), r.stderr)
        let missing = try Proc.run(binary, ["repair", dir.appendingPathComponent("nope.mp4").path])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
    }
}
