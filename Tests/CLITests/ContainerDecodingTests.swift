import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31 ("Nothing lost, round 3"): every file the recorder finishes, leaves behind when
/// killed, or repairs is checked by two independent decoders, ffmpeg and GStreamer.
///
/// Catalogue:
/// - testEveryCodecAndContainerDecodesFinishedKilledAndRepaired: every codec × container pair
///   the library accepts, fragmented and not, recorded once: finished / what a SIGKILL leaves
///   (copied mid-recording) / that repaired, decoded by
///   `ffmpeg -v error -f null -` (silent) and by GStreamer (the same frame count) (item 1).
/// - testVP9InMP4ReplacesAFileOnlyWithAPlayableOne: `-y` over a good file leaves a playable
///   VP9/MP4 (the finishing rewrite once wrote an empty `vpcC`) (item 1).
/// - testRepairOfAHealthyFileChangesNothing: repair in place of a complete file, three times,
///   leaves it byte for byte; repaired to other paths, twice, every decoded frame keeps its
///   time and duration (item 12).
/// - testFullDiskKeepsOnlyCompleteSamples: the file kept after ENOSPC decodes without an error
///   (no cut-off last sample) (item 11).
/// - testALongFrameEndsAtTheStop: with --fps 1/86400 the one frame lasts until the stop, not
///   86,400 s (item 13).
final class ContainerDecodingTests: CLITestCase {
    /// ffmpeg decodes every stream of `file` and says nothing at `-v error`; returns the number
    /// of video frames ffprobe decodes.
    @discardableResult
    func assertFFmpegDecodes(_ file: String, _ what: String, line: UInt = #line) throws -> Int {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-f", "null", "-"], timeout: 120)
        XCTAssertEqual(r.status, 0, "\(what): ffmpeg cannot decode it: \(r.stderr)", line: line)
        XCTAssertEqual(r.stderr, "", "\(what): ffmpeg reports errors", line: line)
        let p = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                         "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file], timeout: 120)
        let frames = Int(p.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertGreaterThan(frames, 0, "\(what): ffprobe decodes no video frame: \(p.stderr)", line: line)
        return frames
    }

    /// GStreamer (its own demuxers; libav, libvpx, aom decoders) plays `file` to its end and
    /// decodes `frames` video frames. Sound, if any, is decoded too, each branch behind a queue:
    /// with the sound pad left unlinked, matroskademux now and then stalls the pipeline for good.
    func assertGStreamerDecodes(_ file: String, frames: Int, _ what: String, line: UInt = #line) throws {
        // (A branch for sound that is not there would keep the pipeline from ever starting.)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", file])
        let sound = probe.stdout.contains("audio")
        let pipeline = "filesrc location=\(file) ! decodebin name=d d. ! queue ! video/x-raw ! fakesink name=v silent=false"
            + (sound ? " d. ! queue ! audio/x-raw ! fakesink name=a" : "")
        let r = try Proc.run("gst-launch-1.0", ["-v"] + pipeline.split(separator: " ").map(String.init), timeout: 60)
        XCTAssertEqual(r.status, 0, "\(what): GStreamer fails: \(r.stderr.suffix(600))", line: line)
        let decoded = r.stdout.components(separatedBy: "\n").filter { $0.contains("last-message = chain") && $0.contains("(v:sink)") }.count
        XCTAssertEqual(decoded, frames, "\(what): GStreamer decodes \(decoded) video frames, ffmpeg \(frames)", line: line)
    }

    func assertDecodes(_ file: String, _ what: String, line: UInt = #line) throws {
        let frames = try assertFFmpegDecodes(file, what, line: line)
        try assertGStreamerDecodes(file, frames: frames, what, line: line)
    }

    /// Every pair the library accepts (VideoCodec × FileType.supports), fragmented and not,
    /// each recorded once in real time: the copy a SIGKILL would leave, taken mid-recording
    /// (MatrixRecording), and that copy repaired; then the recording runs on to its end, the
    /// finished file. A killed --no-fragments MP4/MOV has no index by design: there repair
    /// must refuse with its reason, or give a clean file. Each pair's files are decoded while
    /// the next pair records. (Before, each pair was recorded four times, finished twice and
    /// killed twice, and nothing overlapped.)
    func testEveryCodecAndContainerDecodesFinishedKilledAndRepaired() throws {
        try XCTSkipUnless(Proc.which("gst-launch-1.0") != nil, "GStreamer not installed; run scripts/install-deps.sh")
        let common = ["--source", "synthetic", "--size", "160x120", "--audio", "synthetic", "--quiet", "--fragment-interval", "0.25", "--realtime"]
        var previous: (type: FileType, runs: [MatrixRecording])?
        for type in FileType.allCases {
            for codec in VideoCodec.allCases where type.supports(codec) {
                // Both recordings of the pair at once. The copy 3 s in with fragments: AV1's look-ahead
                // holds about 2 s of video back (a track under a fifth of the movie GStreamer skips as
                // a preview); 1 s in without: the file needs only to have begun.
                let runs = try [true, false].map { fragments in
                    let name = "\(codec)-\(fragments ? "frag" : "plain")"
                    let file = path("\(name).\(type)"), log = path("\(name)-\(type).csv")
                    let copyAt: Int64 = fragments ? 90 : 30
                    let child = try spawnTracked(common + ["--codec", "\(codec)", "--duration", String(Double(copyAt) / 30 + 1.5),
                                                           "--timing-log", log, "-o", file] + (fragments ? [] : ["--no-fragments"]))
                    return MatrixRecording(fragments: fragments, name: name, file: file, log: log, copy: path("\(name)-killed.\(type)"),
                                           copyAt: copyAt, child: child)
                }
                if let previous { try checkMatrixPair(previous.type, previous.runs) }
                previous = (type, runs)
            }
        }
        if let previous { try checkMatrixPair(previous.type, previous.runs) }
    }

    /// The pair's finished files, copies and repaired copies, decoded by ffmpeg and GStreamer.
    func checkMatrixPair(_ type: FileType, _ runs: [MatrixRecording]) throws {
        for run in runs {
            let what = "\(run.name).\(type)"
            let r = run.child.wait(timeout: 60)
            XCTAssertEqual(r.status, 0, "finished \(what): \(r.stderr)")
            try assertDecodes(run.file, "finished \(what)")
            if let failure = run.copyFailure() {
                XCTFail("\(what): no copy mid-recording: \(failure)")
                continue
            }
            let repaired = path("\(run.name)-repaired.\(type)")
            let fix = try Proc.run(binary, ["repair", run.copy, "-o", repaired], timeout: 120)
            if !run.fragments && (type == .mp4 || type == .mov) {
                XCTAssertEqual(fix.status, 1, "repair of a killed --no-fragments \(type): \(fix.stderr)")
                XCTAssertTrue(fix.stderr.contains("cannot be repaired"), fix.stderr)
                continue
            }
            if run.fragments { try assertDecodes(run.copy, "killed \(what)") }
            if fix.status == 0 {
                try assertDecodes(repaired, "repaired \(what)")
            } else {
                XCTAssertFalse(run.fragments, "repair of a killed \(what): \(fix.stderr)")
                XCTAssertTrue(fix.stderr.contains("nothing to keep"), "repair of a killed \(what): \(fix.stderr)")
            }
        }
    }

    /// `-y` over a good file: the new VP9/MP4 replaces it and plays (with and without sound).
    func testVP9InMP4ReplacesAFileOnlyWithAPlayableOne() throws {
        let out = path("x.mp4")
        for audio in [[], ["--audio", "synthetic"]] {
            try Data(count: 0).write(to: URL(fileURLWithPath: out))
            let r = try Proc.run(binary, ["--source", "synthetic", "--codec", "vp9", "--size", "160x120", "--frames", "30",
                                          "--quiet", "-y", "-o", out] + audio, timeout: 60)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try assertFFmpegDecodes(out, "vp9 \(audio)"), 30)
        }
    }

    /// Every packet's stream, times and duration as ffprobe reads them, in a fixed order
    /// (how the tracks interleave is the muxer's choice).
    func packetTimes(_ file: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration", "-of", "csv=p=0", file])
        XCTAssertTrue(r.succeeded, r.stderr)
        return r.stdout.split(separator: "\n").map(String.init).sorted()
    }

    /// Item 12: a complete file repaired in place is left byte for byte, however often; repaired
    /// to other paths, every packet keeps its time and duration and every frame decodes the
    /// same. Each pass once added a frame to the video, moved AAC by its priming (21 ms) in
    /// MP4, moved the video in MKV by it, and the video in WebM by Opus's pre-skip.
    func testRepairOfAHealthyFileChangesNothing() throws {
        let cases: [(String, [String])] = [
            ("video.mp4", []), ("av.mp4", ["--audio", "synthetic"]), ("av.mov", ["--audio", "synthetic", "--no-fragments"]),
            ("av.mkv", ["--audio", "synthetic"]), ("av.webm", ["--audio", "synthetic", "--codec", "vp9"]),
        ]
        for (name, extra) in cases {
            let file = path(name)
            let r = try Proc.run(binary, ["--source", "synthetic", "--size", "160x120", "--duration", "1", "--threads", "1",
                                          "--quiet", "-o", file] + extra, timeout: 60)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            let original = try Data(contentsOf: URL(fileURLWithPath: file))
            let frames = try FF.framemd5(file, outputArgs: ["-fps_mode", "passthrough"]), packets = try packetTimes(file)
            for pass in 1...3 {
                let fix = try Proc.run(binary, ["repair", file], timeout: 60)
                XCTAssertEqual(fix.status, 0, "\(name) pass \(pass): \(fix.stderr)")
                XCTAssertTrue(fix.stdout.contains("nothing to repair"), "\(name) pass \(pass): \(fix.stdout)")
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), original, "\(name) changed by repair pass \(pass)")
            }
            var copy = file
            for pass in 1...2 {
                let next = path("copy\(pass)-\(name)")
                let fix = try Proc.run(binary, ["repair", copy, "-o", next], timeout: 60)
                XCTAssertEqual(fix.status, 0, "\(name) copy \(pass): \(fix.stderr)")
                XCTAssertEqual(try packetTimes(next), packets, "\(name) copy \(pass): packet times differ")
                XCTAssertEqual(try FF.framemd5(next, outputArgs: ["-fps_mode", "passthrough"]), frames, "\(name) copy \(pass): decoded frames differ")
                copy = next
            }
        }
    }

    /// Item 13: at --fps 1/86400 the one frame lasts until the stop (SIGINT 2 s after it was
    /// logged), beside sound of the same length, not a day; without sound too.
    func testALongFrameEndsAtTheStop() throws {
        for (name, extra) in [("day.mp4", ["--audio", "synthetic"]), ("day.mkv", [])] {
            let out = path(name), log = path("\(name).csv")
            let child = try spawnTracked(["--source", "synthetic", "--size", "160x120", "--fps", "1/86400", "--realtime", "--quiet",
                                          "--timing-log", log, "-o", out] + extra)
            XCTAssertNotNil(TimingLogFile.waitForFrame(0, in: log, timeout: 30), "\(name): no first frame")
            Thread.sleep(forTimeInterval: 2)
            child.signal(SIGINT)
            let r = child.wait(timeout: 30)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            try assertFFmpegDecodes(out, name)
            let p = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration:format=duration", "-of", "json", out])
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(p.stdout.utf8)) as? [String: Any])
            let format = try XCTUnwrap(double((json["format"] as? [String: Any])?["duration"]), p.stdout)
            XCTAssertGreaterThan(format, 1.9, "\(name): \(p.stdout)")
            XCTAssertLessThan(format, 20, "\(name): the frame outlasts the stop: \(p.stdout)")
            let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
            let durations = streams.compactMap { double($0["duration"]) }
            if durations.count == 2 {
                XCTAssertEqual(durations[0], durations[1], accuracy: 0.1, "\(name): video and sound end together: \(p.stdout)")
            }
        }
    }

    /// Item 11: a disk that fills mid-fragment leaves a file of whole fragments only (it once
    /// ended in a cut-off sample: "Invalid NAL unit size … partial file", "File ended
    /// prematurely"); it decodes silently, and the message counts what it holds.
    func testFullDiskKeepsOnlyCompleteSamples() throws {
        let mountPoint = path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Proc.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint])
        try XCTSkipUnless(mount.succeeded, "cannot mount a small tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? Proc.run("umount", [mountPoint]) }
        for name in ["full.mp4", "full.mkv"] {
            let out = mountPoint + "/" + name
            let r = try Proc.run(binary, ["--source", "synthetic", "--size", "1280x720", "--bitrate", "8M", "--duration", "60",
                                          "--quiet", "-o", out], timeout: 60)
            XCTAssertEqual(r.status, 1, "\(name): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
            let frames = try assertFFmpegDecodes(out, name)
            try assertGStreamerDecodes(out, frames: frames, name)
            XCTAssertTrue(r.stderr.contains("kept what was recorded: \(out) (\(frames) frames readable)"), "\(frames) in the file: \(r.stderr)")
            try FileManager.default.removeItem(atPath: out)
        }
    }
}

/// One recording of the codec x container matrix and the copy of its file that a SIGKILL at
/// frame `copyAt` would leave: a thread of its own waits for that frame in the timing log,
/// stops the recorder (SIGSTOP, then waits until all its threads have stopped: kill() only
/// queues the signal, and a copy taken while a write is in flight may hold half a cluster),
/// copies the file and lets it go on (SIGCONT), so the test decodes the previous pair's files
/// meanwhile. (The recorder writes each fragment or cluster with one write().)
final class MatrixRecording: @unchecked Sendable {
    let fragments: Bool, name: String, file: String, log: String, copy: String, copyAt: Int64
    let child: ChildProcess
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: String?

    init(fragments: Bool, name: String, file: String, log: String, copy: String, copyAt: Int64, child: ChildProcess) {
        (self.fragments, self.name, self.file, self.log, self.copy, self.copyAt, self.child) = (fragments, name, file, log, copy, copyAt, child)
        Thread { [self] in takeCopy() }.start()
    }

    private func takeCopy() {
        var why: String?
        if TimingLogFile.waitForFrame(copyAt, in: log, timeout: 60) == nil {
            why = "never reached frame \(copyAt): \(child.currentStderr())"
        } else {
            if !child.stop() {
                why = child.exited() != nil ? "the recording ended before its copy could be taken" : "the recorder did not stop within 10 s"
            } else {
                do { try FileManager.default.copyItem(atPath: file, toPath: copy) } catch { why = "\(error)" }
            }
            child.signal(SIGCONT)
        }
        lock.withLock { failure = why }
        done.signal()
    }

    /// Waits for the copy: nil once it was taken, else why it was not.
    func copyFailure() -> String? {
        done.wait()
        done.signal()
        return lock.withLock { failure }
    }
}
