import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31 ("Nothing lost, round 3"): messages that cannot be printed, signals during
/// start-up, replay clips that were not written, default names, an output directory that
/// moved. Every recording is checked with ffprobe and `ffmpeg -v error -f null -`.
///
/// - testUnwritableStandardErrorNeverStopsTheRecording: `2>/dev/full`, `2>&-` (with -y, and the pause message): exit 0, the whole file, no partial left
/// - testAReaderThatGoesAwayNeverStopsTheRecording: `2>&1 | tee log`, tee killed, then SIGINT: exit 0, the whole file
/// - testAStopWhileALiveOutputConnectsLeavesNothing: SIGTERM/SIGINT/SIGHUP during a stalled RTMP connect: exit 1 at once, no file (with -y the old one intact)
/// - testAStopJustAfterTheFileAppearsLeavesNothingOrAWholeFile: SIGTERM as soon as the output exists: no file, or a complete one
/// - testDefaultNamesAreUniqueAndAnnounced: two runs in the same second without -o: -2, -3 names, both recorded
/// - testARemovedOutputDirectoryIsSaidToBeLost: the directory removed mid-run: exit 1, "removed", nothing claimed complete
/// - testAMovedOutputDirectoryNamesWhereTheFileIs: the directory moved mid-run (with -y): exit 1, the message names the partial file where it is now
/// - testAReplayClipThatWasNotWrittenIsANonZeroExit: SIGUSR2 with no room for the clip: exit 1, recording complete, replayFailed 1 in --stats-json
/// - testReplayMemoryWithoutReplayBufferIsAUsageError: --replay-memory alone is refused, naming both options
final class SignalsAndPrintingTests: CLITestCase {

    private static let scene = ["--source", "synthetic", "--realtime", "--size", "320x240", "--fps", "30", "--audio", "none"]

    /// The file's duration (ffprobe), after checking that it decodes without a single error.
    private func checkedDuration(_ file: String, _ context: String = "") throws -> Double {
        let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decode.succeeded, "\(context): ffmpeg could not decode \(file)")
        XCTAssertEqual(decode.stderr, "", "\(context): decoding \(file) gave errors")
        let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file])
        return try XCTUnwrap(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(context): \(probe.stderr)")
    }

    private func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }
    }

    func testUnwritableStandardErrorNeverStopsTheRecording() throws {
        for (name, target, overwrite) in [("full", ErrorOutput.path("/dev/full"), false), ("closed", .closed, false),
                                          ("full-y", .path("/dev/full"), true), ("closed-y", .closed, true)] {
            let output = path("\(name).mp4"), log = path("\(name).csv")
            if overwrite { try Data("old".utf8).write(to: URL(fileURLWithPath: output)) }
            let child = try spawnTracked(Self.scene + ["--timing-log", log, "-o", output] + (overwrite ? ["-y"] : []), stderr: target)
            // The pause and resume messages go to the same broken stderr.
            XCTAssertNotNil(TimingLogFile.waitForFrame(20, in: log, timeout: 60), name)
            child.signal(SIGUSR1)
            XCTAssertNotNil(TimingLogFile.waitForFrame(0, in: log, reasons: ["paused"], timeout: 30), name)
            child.signal(SIGUSR1)
            XCTAssertNotNil(TimingLogFile.waitForFrame(90, in: log, timeout: 60), name)
            child.signal(SIGINT)
            let r = child.wait(timeout: 60)
            XCTAssertEqual(r.status, 0, "\(name): a message that cannot be printed must not end the recording")
            XCTAssertGreaterThanOrEqual(try checkedDuration(output, name), 3.0, "\(name): the file must hold everything up to the stop")
            XCTAssertEqual(try leftovers(), [], name)
        }
    }

    func testAReaderThatGoesAwayNeverStopsTheRecording() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        // Close-on-exec, so that neither child holds the other end open (dup2 onto 0 or 2 clears it).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let teeLog = path("tee.log")
        let tee = try spawnTracked([teeLog], executable: "tee", stdin: fds[0])
        let output = path("piped.mp4"), log = path("piped.csv")
        // Not --quiet: the recorder has things to say, and says them into the pipe.
        let child = try spawnTracked(["--source", "synthetic", "--realtime", "--size", "320x240", "--fps", "30",
                                      "--timing-log", log, "-o", output], stderr: .descriptor(fds[1]))
        close(fds[0])
        close(fds[1])
        XCTAssertNotNil(TimingLogFile.waitForFrame(90, in: log, timeout: 60))
        XCTAssertTrue(Loopback.poll(timeout: 10) { ((try? String(contentsOfFile: teeLog, encoding: .utf8)) ?? "").contains("swift-record") },
                      "the messages went through tee")
        // Ctrl-C on `swift-record … 2>&1 | tee log`: tee goes first.
        tee.signal(SIGKILL)
        tee.wait(timeout: 10)
        child.signal(SIGINT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, "the recorder must finish the file, not die of SIGPIPE")
        XCTAssertGreaterThanOrEqual(try checkedDuration(output), 3.0)
    }

    /// A listener that accepts TCP connections (the kernel's backlog) and never answers.
    private func silentListener() throws -> (fd: Int32, port: UInt16) { try Loopback.silentListener() }

    func testAStopWhileALiveOutputConnectsLeavesNothing() throws {
        let (fd, port) = try silentListener()
        defer { close(fd) }
        for (sig, overwrite) in [(SIGTERM, false), (SIGINT, false), (SIGHUP, true)] {
            let output = path("ex\(sig).mp4"), log = path("ex\(sig).csv"), stats = path("ex\(sig).json")
            let old = Data("the file that was there".utf8)
            if overwrite { try old.write(to: URL(fileURLWithPath: output)) }
            let child = try spawnTracked(Self.scene + ["--duration", "20", "--timing-log", log, "--stats-json", stats,
                                                       "-o", output, "-o", "rtmp://127.0.0.1:\(port)/live/key"] + (overwrite ? ["-y"] : []))
            // The file (or, with -y, its partial) is created before the connect starts.
            let created = Loopback.poll(timeout: 30) {
                overwrite ? ((try? self.leftovers()) ?? []).count == 1 : FileManager.default.fileExists(atPath: output)
            }
            XCTAssertTrue(created, "signal \(sig): the output was not created: \(child.currentStderr())")
            child.signal(sig)
            let signalled = Date()
            let r = child.wait(timeout: 30)
            XCTAssertEqual(r.status, 1, "signal \(sig): \(r.stderr)")
            XCTAssertLessThan(Date().timeIntervalSince(signalled), 4, "signal \(sig): the stop waited out the 5-s connect")
            XCTAssertTrue(r.stderr.contains("before the recording started; nothing was recorded"), r.stderr)
            if overwrite {
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), old, "the file that was there stays as it was")
            } else {
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), "signal \(sig): a file was left")
            }
            XCTAssertEqual(try leftovers(), [], "signal \(sig)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: log))
            XCTAssertFalse(FileManager.default.fileExists(atPath: stats))
        }
    }

    func testAStopJustAfterTheFileAppearsLeavesNothingOrAWholeFile() throws {
        for attempt in 1...3 {
            let output = path("early\(attempt).mp4")
            let child = try spawnTracked(Self.scene + ["--duration", "20", "-o", output])
            // The moment the file exists: the window between its creation and the recording.
            let deadline = Date().addingTimeInterval(30)
            while !FileManager.default.fileExists(atPath: output) && child.exited() == nil && Date() < deadline { usleep(200) }
            child.signal(SIGTERM)
            let r = child.wait(timeout: 30)
            if r.status == 0 {
                XCTAssertGreaterThan(try checkedDuration(output, "attempt \(attempt)"), 0)
            } else {
                XCTAssertEqual(r.status, 1, "attempt \(attempt): killed by the signal? \(r.stderr)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), "attempt \(attempt): an unfinished file was left")
            }
        }
    }

    func testDefaultNamesAreUniqueAndAnnounced() throws {
        // The names the next seconds would get are taken already: -2 must follow.
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        let now = Date()
        var taken: [String] = []
        for s in 0..<15 {
            let name = "swift-record-\(f.string(from: now.addingTimeInterval(Double(s)))).mp4"
            XCTAssertTrue(FileManager.default.createFile(atPath: path(name), contents: Data()))
            taken.append(name)
        }
        let command = "cd '\(dir.path)' && exec '\(binary)' --source synthetic --size 320x240 --frames 10 --audio none"
        let runs = try (0..<2).map { _ in try spawnTracked(["-c", command], executable: "/bin/sh") }
        let results = runs.map { $0.wait(timeout: 120) }
        var chosen: [String] = []
        for r in results {
            XCTAssertEqual(r.status, 0, r.stderr)
            let line = r.stderr.split(separator: "\n").first { $0.contains("recording to ") }
            let name = try XCTUnwrap(line?.components(separatedBy: "recording to ").last, "the chosen name is announced: \(r.stderr)")
            XCTAssertTrue(name.hasPrefix("swift-record-"), name)
            XCTAssertFalse(taken.contains(name), "\(name) was taken")
            chosen.append(name)
            XCTAssertGreaterThan(try checkedDuration(path(name)), 0.3)
        }
        XCTAssertEqual(Set(chosen).count, 2, "two runs, two names: \(chosen)")
        for name in taken {
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path(name))[.size] as? Int, 0, "\(name) was touched")
        }
    }

    func testARemovedOutputDirectoryIsSaidToBeLost() throws {
        let sub = path("sub")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        let output = sub + "/x.mp4", log = path("removed.csv")
        let child = try spawnTracked(Self.scene + ["--timing-log", log, "-o", output])
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 60))
        try FileManager.default.removeItem(atPath: sub)
        child.signal(SIGINT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("the output directory \(sub) was removed while recording"), r.stderr)
        XCTAssertTrue(r.stderr.contains("lost"), r.stderr)
        XCTAssertFalse(r.stderr.contains("wrote "), r.stderr)
        XCTAssertFalse(r.stderr.contains("complete"), r.stderr)
    }

    func testAMovedOutputDirectoryNamesWhereTheFileIs() throws {
        let sub = path("sub"), moved = path("moved")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        let output = sub + "/x.mp4", log = path("moved.csv")
        try Data("old".utf8).write(to: URL(fileURLWithPath: output))
        let child = try spawnTracked(Self.scene + ["--timing-log", log, "-o", output, "-y"])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 60))
        XCTAssertEqual(rename(sub, moved), 0)
        child.signal(SIGINT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("was moved while recording"), r.stderr)
        let partial = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: moved).first { $0.contains(".partial-") },
                                    "the partial file went with the directory")
        XCTAssertTrue(r.stderr.contains(moved + "/" + partial), "the message must say where the file is now: \(r.stderr)")
        XCTAssertGreaterThanOrEqual(try checkedDuration(moved + "/" + partial), 1.0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: moved + "/x.mp4")), Data("old".utf8))
    }

    func testAReplayClipThatWasNotWrittenIsANonZeroExit() throws {
        // Room for the recording's one file and nothing more: the clip's file cannot be created.
        let mountPoint = path("one-file")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Proc.run("mount", ["-t", "tmpfs", "-o", "size=64m,nr_inodes=2", "tmpfs", mountPoint])
        try XCTSkipUnless(mount.succeeded, "cannot mount a small tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? Proc.run("umount", [mountPoint]) }
        let output = mountPoint + "/r.mp4", log = path("replay.csv"), stats = path("replay.json")
        let child = try spawnTracked(Self.scene + ["--replay-buffer", "2s", "--timing-log", log, "--stats-json", stats, "-o", output])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 60))
        child.signal(SIGUSR2)
        XCTAssertTrue(Loopback.poll(timeout: 30) { child.currentStderr().contains("replay not saved") }, child.currentStderr())
        child.signal(SIGINT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 1, "a clip asked for and not written: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
        XCTAssertTrue(r.stderr.contains("1 replay clip was not saved"), r.stderr)
        XCTAssertGreaterThanOrEqual(try checkedDuration(output), 2.0, "the recording itself is complete")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        XCTAssertEqual(int(json["replayFailed"]), 1)
        XCTAssertEqual(int(json["replaySaved"]), 0)
    }

    func testReplayMemoryWithoutReplayBufferIsAUsageError() throws {
        let output = path("mem.mp4")
        let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "5", "--replay-memory", "256M", "-o", output], timeout: 60)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--replay-memory") && r.stderr.contains("--replay-buffer"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
