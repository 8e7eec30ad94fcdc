import Foundation
import TestSupport
import XCTest

/// A constant frame rate survives a stall: a real-time recording whose whole process is
/// stopped for half a second (SIGSTOP/SIGCONT, as a loaded laptop does) still has one frame
/// per tick, a constant rate by mediainfo, and no timestamp warnings, in every container.
final class ConstantRateStallTests: CLITestCase {

    /// Records 4 s of the synthetic scene at 30 fps, stopping the process for 0.5 s once the
    /// timing log shows frame 45; returns the file, the timing log's rows and the stats.
    func recordWithStall(_ name: String, audio: Bool) throws -> (path: String, rows: [TimingLogRow], stats: [String: Any]) {
        let out = dir.appendingPathComponent(name).path
        let log = dir.appendingPathComponent("\(name).csv").path
        let json = dir.appendingPathComponent("\(name).json").path
        var args = ["--source", "synthetic", "--realtime", "--duration", "4", "--size", "320x240", "--fps", "30",
                    "--timing-log", log, "--stats-json", json, "--quiet", "-o", out]
        if audio { args += ["--audio", "synthetic"] }
        let child = try spawnTracked(args)
        // The stall comes at a moment of the recording itself, not of the test's clock.
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 60), "the recording did not reach frame 45")
        child.signal(SIGSTOP)
        usleep(500_000)
        child.signal(SIGCONT)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let stats = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        return (out, TimingLogFile.rows(log), stats)
    }

    func mediainfo(_ path: String, _ field: String) throws -> String {
        let tool = try XCTUnwrap(Proc.which("mediainfo"), "mediainfo not installed; run scripts/install-deps.sh")
        let r = try Proc.run(tool, ["--Inform=Video;%\(field)%", path], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Warnings ffmpeg gives reading every packet of the file (timestamps above all).
    func decodeWarnings(_ path: String) throws -> String {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", path, "-f", "null", "-"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testAStoppedProcessStillLeavesOneFramePerTickInEveryContainer() throws {
        for ext in ["mp4", "mov", "mkv"] {
            let (path, rows, stats) = try recordWithStall("stall.\(ext)", audio: false)
            XCTAssertEqual(int(try FF.probe(path).stream["nb_read_frames"]), 120, ext)
            XCTAssertEqual(try mediainfo(path, "FrameRate_Mode"), "CFR", ext)
            XCTAssertEqual(try decodeWarnings(path), "", ext)
            // The frames the stall held up were written late, in order, and said so.
            let filled = rows.filter { $0.reason == "filled" }
            XCTAssertGreaterThan(filled.count, 0, "\(ext): no filled ticks in the timing log")
            XCTAssertEqual(stats["ticksFilled"] as? Int, filled.count, ext)
            XCTAssertEqual(stats["ticksInGaps"] as? Int, 0, ext)
            XCTAssertFalse(rows.contains { $0.reason == "gap" || $0.reason == "dropped-encoder-busy" }, ext)
            let frames = rows.filter { ["captured", "repeated", "filled"].contains($0.reason) }.compactMap(\.frame)
            XCTAssertEqual(frames.sorted(), Array(0..<120), "\(ext): every tick once, in order")
        }
    }

    func testWithSoundTheAudioStaysContinuousThroughTheStall() throws {
        let (path, _, _) = try recordWithStall("stall-av.mp4", audio: true)
        XCTAssertEqual(int(try FF.probe(path).stream["nb_read_frames"]), 120)
        XCTAssertEqual(try mediainfo(path, "FrameRate_Mode"), "CFR")
        XCTAssertEqual(try decodeWarnings(path), "")
        // Audio packets follow each other without a hole, and last as long as the pictures.
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time",
                                         "-of", "csv=p=0", path], timeout: 60)
        let packets = r.stdout.split(separator: "\n").compactMap { line -> (Double, Double)? in
            let f = line.split(separator: ",").compactMap { Double($0) }
            return f.count == 2 ? (f[0], f[1]) : nil
        }
        XCTAssertGreaterThan(packets.count, 100)
        for (a, b) in zip(packets, packets.dropFirst()) {
            XCTAssertEqual(a.0 + a.1, b.0, accuracy: 0.0005, "audio hole at \(a.0) s")
        }
        let end = try XCTUnwrap(packets.last.map { $0.0 + $0.1 })
        XCTAssertEqual(end, 4.0, accuracy: 0.03, "audio ends where the pictures do")
    }
}
