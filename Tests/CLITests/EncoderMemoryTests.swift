import Foundation
import TestSupport
import XCTest

/// The command keeps libx264's picture buffers on regular pages (EncoderMemory): checked in
/// the kernel's own accounting of the running recorder, beside ffmpeg encoding the same way,
/// whose x264 buffers get huge pages wherever the kernel hands them out.
final class EncoderMemoryTests: CLITestCase {
    /// `/proc/PID/<file>`'s `key:` line, as the number before its unit.
    private func procValue(_ pid: pid_t, _ file: String, _ key: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
              let value = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) }) else {
            throw TestError.failed("no \(key) in /proc/\(pid)/\(file)")
        }
        return value
    }

    /// Huge pages the kernel hands out on request (`madvise`) or always: not `[never]`.
    private var kernelOffersHugePages: Bool {
        let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
        return !mode.isEmpty && !mode.contains("[never]")
    }

    func testRecordingKeepsTheEncoderOnRegularPages() throws {
        let log = dir.appendingPathComponent("timing.csv").path
        let out = dir.appendingPathComponent("out.mp4").path
        let child = try spawnTracked(["--source", "synthetic", "--size", "1280x720", "--realtime", "--duration", "60",
                                      "--codec", "h264", "--preset", "veryfast", "--audio", "none", "--quiet",
                                      "--timing-log", log, "-o", out])
        // By frame 45 x264 has filled its lookahead and holds all the pictures it will.
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 60), "no frame 45: \(child.currentStderr())")
        XCTAssertEqual(try procValue(child.pid, "status", "THP_enabled"), 0, "the recorder still allows huge pages")
        XCTAssertEqual(try procValue(child.pid, "smaps_rollup", "AnonHugePages"), 0, "some of the recorder's memory is on huge pages")
        child.signal(SIGINT)
        let result = child.wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertGreaterThan(int(try FF.probe(out).stream["nb_read_frames"]) ?? 0, 45)

        // The control: the same encoder in ffmpeg, at the same size and settings, does get
        // huge pages where the kernel offers them, so the check above can tell.
        guard kernelOffersHugePages else { return }
        let reference = dir.appendingPathComponent("ffmpeg.mp4").path
        let ffmpeg = try spawnTracked(["-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                                       "-t", "60", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-y", reference],
                                      executable: "ffmpeg")
        var hugeKiB = 0
        let deadline = Date().addingTimeInterval(30)
        while hugeKiB == 0, Date() < deadline, ffmpeg.exited() == nil {
            usleep(200_000)
            hugeKiB = (try? procValue(ffmpeg.pid, "smaps_rollup", "AnonHugePages")) ?? 0
        }
        ffmpeg.terminate()
        XCTAssertGreaterThan(hugeKiB, 0, "ffmpeg's x264 got no huge pages either: the check cannot tell here")
    }
}
