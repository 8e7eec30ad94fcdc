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

    /// SIGKILL at ten moments between 1 s and 6 s of the recording (its own timing log says
    /// when): every file opens, holds at least (kill time − 2 s) of video, and `repair` makes
    /// an ordinary MP4 of the same frames.
    func testKilledRecordingsArePlayableAndRepairable() throws {
        let killTimes = [1.0, 1.6, 2.1, 2.7, 3.2, 3.8, 4.3, 4.9, 5.4, 5.95]
        // Two batches of five recordings at once keep the test short without starving the machine.
        for batch in [Array(killTimes.prefix(5)), Array(killTimes.suffix(5))] {
            var children: [(t: Double, out: String, log: String, child: ChildProcess)] = []
            for t in batch {
                let out = dir.appendingPathComponent("kill-\(t).mp4").path, log = dir.appendingPathComponent("kill-\(t).csv").path
                children.append((t, out, log, try spawnTracked(["--source", "synthetic", "--size", "640x360", "--realtime",
                                                                "--duration", "60", "--quiet", "--timing-log", log, "-o", out])))
            }
            let killedAt = TimingLogFile.signal(children.map { ($0.child, $0.log, Int64(($0.t * 30).rounded()), SIGKILL) })
            for ((t, out, _, child), frame) in zip(children, killedAt) {
                let r = child.wait(timeout: 10)
                // The recording's time when it was killed: the last frame it had logged.
                let killed = try XCTUnwrap(frame, "kill at \(t) s: the recording never got there: \(r.stderr)")
                let killTime = Double(killed + 1) / 30
                let frames = try decodedFrameCount(out)
                let seconds = try decodedSeconds(out)
                XCTAssertGreaterThanOrEqual(seconds, killTime - 2, "killed at \(killTime) s: \(frames) frames, \(seconds) s decodable")
                guard frames > 0 else { continue }
                let before = try decodedFrameHashes(out)
                let fixed = out.replacingOccurrences(of: ".mp4", with: "-fixed.mp4")
                let r2 = try Proc.run(binary, ["repair", out, "-o", fixed])
                XCTAssertEqual(r2.status, 0, "repair after kill at \(t) s: \(r2.stderr)")
                XCTAssertEqual(try decodedFrameHashes(fixed), before, "repair keeps the decodable frames (kill at \(t) s)")
                let boxes = try topLevelBoxes(URL(fileURLWithPath: fixed))
                XCTAssertFalse(boxes.contains("moof"), "repaired file is not fragmented: \(boxes)")
                XCTAssertLessThan(try XCTUnwrap(boxes.firstIndex(of: "moov")), try XCTUnwrap(boxes.firstIndex(of: "mdat")))
            }
        }
    }

    func testKilledMKVIsPlayable() throws {
        let out = dir.appendingPathComponent("kill.mkv").path, log = dir.appendingPathComponent("kill.csv").path
        let child = try spawnTracked(["--source", "synthetic", "--size", "640x360", "--realtime", "--duration", "60", "--quiet",
                                      "--timing-log", log, "-o", out])
        // Killed 3.5 s into the recording (by its own log): at least 1.5 s of it plays.
        let killed = TimingLogFile.signal([(child, log, 105, SIGKILL)])[0]
        let r = child.wait(timeout: 10)
        XCTAssertNotNil(killed, "the recording never reached 3.5 s: \(r.stderr)")
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
        let log = dir.appendingPathComponent("full.csv").path, stats = dir.appendingPathComponent("full.json").path
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "1280x720", "--bitrate", "8M", "--realtime",
                                      "--duration", "60", "--quiet", "--timing-log", log, "--stats-json", stats, "-o", out], timeout: 60)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains(out), r.stderr)
        XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
        // Times as the recording measured them, not from the test's spawn. 3 MB at 8 Mbit/s
        // fill in about 3 s of recording; the recorder must notice and stop promptly:
        // capture ends within 3 s of media after the last frame the disk took (the fragment
        // lost with the failure, the encoder's delay and the noticing), and the process is
        // done within 2 s after capture ended.
        let last = try XCTUnwrap(TimingLogFile.rows(log).last { $0.frame != nil && $0.pts != nil })
        let kept = try decodedSeconds(out)
        XCTAssertLessThan(try XCTUnwrap(last.pts) - kept, 3, "capture stopped at \(last.pts ?? 0) s of media; the file keeps \(kept) s")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let elapsed = try XCTUnwrap(double(json["elapsedSeconds"]))
        XCTAssertLessThan(elapsed - last.hostTime, 2, "stopped within 2 s of the failure")
        XCTAssertLessThan(elapsed, 20, "did not go on recording to nowhere")
        XCTAssertGreaterThan(try decodedFrameCount(out), 15, "earlier frames playable")
        // What the messages and the stats claim is what a reader finds in the file.
        let inFile = try decodedFrameCount(out)
        XCTAssertTrue(r.stderr.contains("kept what was recorded: \(out) (\(inFile) frames readable)"), "\(inFile) in the file: \(r.stderr)")
        XCTAssertEqual(int(json["framesInFile"]), inFile)

        // Without fragments a full disk leaves no index: said plainly, not "kept".
        let plain = mountPoint + "/plain.mp4"
        try? FileManager.default.removeItem(atPath: out)
        let p = try Proc.run(binary, ["--source", "synthetic", "--size", "1280x720", "--bitrate", "8M", "--duration", "60",
                                      "--no-fragments", "--quiet", "-o", plain], timeout: 60)
        XCTAssertNotEqual(p.status, 0)
        XCTAssertFalse(p.stderr.contains("kept what was recorded"), p.stderr)
        XCTAssertTrue(p.stderr.contains("nothing playable was kept"), p.stderr)
    }

    /// A link to a device is followed and the device refused before anything is written
    /// (the full-disk path itself is the tmpfs test above).
    func testALinkToADeviceIsRefused() throws {
        let link = dir.appendingPathComponent("devfull.mp4").path
        XCTAssertEqual(symlink("/dev/full", link), 0)
        let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "300", "--quiet", "-o", link, "-y"], timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("character device"), r.stderr)
        XCTAssertTrue(r.stderr.contains(link), r.stderr)
        var st = stat()
        XCTAssertEqual(lstat(link, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFLNK, "the link stays a link")
        XCTAssertEqual(stat("/dev/full", &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFCHR)
    }

    /// convert --allow-partial on a full disk: the message's count is what ffprobe finds in
    /// the kept file, or it says plainly that nothing playable was kept.
    func testConvertOnAFullDiskClaimsOnlyWhatTheFileHolds() throws {
        let mountPoint = dir.appendingPathComponent("tiny").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Proc.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try XCTSkipUnless(mount.succeeded, "cannot mount a small tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? Proc.run("umount", [mountPoint]) }
        let frameBytes = 320 * 240 * 3 / 2
        let raw = dir.appendingPathComponent("noise.yuv").path
        try Data((0..<(frameBytes * 60)).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 11) }).write(to: URL(fileURLWithPath: raw))
        for extra in [[String](), ["--allow-partial"]] {
            let out = mountPoint + "/full\(extra.count).mp4"
            let r = try Proc.run(binary, ["convert", raw, "--size", "320x240", "--qp", "0", "--quiet", "-o", out] + extra, timeout: 60)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
            guard !extra.isEmpty else {
                XCTAssertFalse(FileManager.default.fileExists(atPath: out), "without --allow-partial nothing is kept")
                continue
            }
            let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                 "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", out])
            let inFile = probe.succeeded ? Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 : 0
            if inFile > 0 {
                XCTAssertTrue(r.stderr.contains("kept what was written: \(out) (\(inFile) frame"), "\(inFile) in the file: \(r.stderr)")
            } else {
                XCTAssertTrue(r.stderr.contains("nothing playable was kept"), r.stderr)
            }
        }
    }

    /// An MKV cut off before its first frame is said to be that, not a --no-fragments MP4.
    func testRepairOfAMatroskaFileCutBeforeItsFirstFrame() throws {
        let whole = dir.appendingPathComponent("whole.mkv").path
        let r = try Proc.run(binary, ["--source", "synthetic", "--size", "64x48", "--frames", "3", "--quiet", "-o", whole])
        XCTAssertEqual(r.status, 0, r.stderr)
        let cut = dir.appendingPathComponent("cut.mkv").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(200)).write(to: URL(fileURLWithPath: cut))
        let before = try Data(contentsOf: URL(fileURLWithPath: cut))
        let repaired = try Proc.run(binary, ["repair", cut])
        XCTAssertEqual(repaired.status, 1, repaired.stderr)
        XCTAssertTrue(repaired.stderr.contains("before its first complete frame"), repaired.stderr)
        XCTAssertFalse(repaired.stderr.contains("--no-fragments"), repaired.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: cut)), before, "a failed repair leaves the file as it was")
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
