import Foundation
import TestSupport
import XCTest

/// Recording with sound: the synthetic tone clicks where the synthetic scene flashes, so
/// the A/V offset of a file is measured by ffmpeg alone (signalstats on the flash box,
/// the decoded PCM for the clicks).
final class AudioRecordingTests: CLITestCase {
    private func record(_ args: [String], timeout: Double = 120) throws -> ProcessResult {
        try Proc.run(binary, args, timeout: timeout)
    }

    private func offsets(_ path: String, width: Int, height: Int, track: Int = 0) throws -> (flashes: [Double], offsets: [Double]) {
        let flashes = try AudioCheck.flashTimes(path, width: width, height: height)
        let (pcm, start) = try AudioCheck.decodeTimed(path, track: track)
        let clicks = AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + start }
        return (flashes, AudioCheck.offsets(flashes: flashes, clicks: clicks))
    }

    /// Offline, 300 frames: AAC-LC (mp4a.40.2) in MP4 and Opus in WebM, every click within
    /// 1 ms of its flash frame, audio as long as the video within one audio frame.
    func testOfflineClicksLandOnTheirFlashFrames() throws {
        let cases: [(String, String, [String])] = [
            ("mp4", "aac", ["--preset", "veryfast"]), ("webm", "opus", ["--codec", "vp9"]), ("mkv", "aac", []),
            ("mp4", "opus", ["--audio-codec", "opus"]), ("mkv", "opus", ["--audio-codec", "opus", "--no-fragments"]),
            ("mov", "aac", ["--no-fragments"]),
        ]
        for (ext, codec, extra) in cases {
            let out = dir.appendingPathComponent("sync-\(codec)\(extra.count).\(ext)").path
            let r = try record(["--source", "synthetic", "--size", "320x240", "--frames", "300", "--audio", "synthetic",
                                "--quiet", "-o", out] + (extra.contains("--preset") ? extra : ["--preset", "ultrafast"] + extra))
            XCTAssertEqual(r.status, 0, r.stderr)
            let audio = try AudioCheck.probe(out)
            XCTAssertEqual(audio["codec_name"] as? String, codec, ext)
            XCTAssertEqual(int(audio["sample_rate"]), 48_000, ext)
            XCTAssertEqual(int(audio["channels"]), 2, ext)
            let (flashes, offsets) = try offsets(out, width: 320, height: 240)
            XCTAssertEqual(flashes.count, 10, "\(ext): flashes at \(flashes)")
            for (f, o) in zip(flashes, offsets) {
                XCTAssertLessThanOrEqual(abs(o), 0.001, "\(ext): the click for the flash at \(f) s is \(o * 1000) ms off")
            }
            // Both tracks end together (within one audio frame), wherever the container starts them.
            let video = try FF.probe(out).stream
            let (pcm, audioStart) = try AudioCheck.decodeTimed(out)
            let audioEnd = audioStart + Double(pcm.count) / 48_000
            let videoEnd = (try AudioCheck.flashTimes(out, width: 320, height: 240).first ?? 0) + (try XCTUnwrap(double(video["nb_read_frames"]))) / 30
            XCTAssertEqual(audioEnd, videoEnd, accuracy: 1024.0 / 48_000, "\(ext): audio ends at \(audioEnd) s, video at \(videoEnd) s")
            if ext == "mp4" && codec == "aac" {
                XCTAssertEqual(audio["profile"] as? String, "LC")
                XCTAssertTrue(try AudioCheck.isMP4A402(out), "the esds says mp4a.40.2")
            }
        }
    }

    /// Short recordings end their sound with the pictures, to the millisecond ffprobe reads
    /// from the edit lists: the last, partial AAC or Opus frame survives the fragments and
    /// their rewrite (it was cut to nothing with one frame, and by 8 ms with three).
    func testTheLastPartialAudioFrameIsKept() throws {
        let cases: [(String, [String])] = [
            ("mp4", []), ("mp4", ["--no-fragments"]), ("mov", []), ("mp4", ["--audio-codec", "opus"]),
        ]
        for (ext, extra) in cases {
            for frames in [1, 3, 7] {
                let out = dir.appendingPathComponent("end\(frames)-\(extra.joined()).\(ext)").path
                let r = try record(["--source", "synthetic", "--size", "160x120", "--fps", "60", "--frames", "\(frames)",
                                    "--audio", "synthetic", "--preset", "ultrafast", "--quiet", "-o", out] + extra)
                XCTAssertEqual(r.status, 0, r.stderr)
                let p = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", out])
                var durations: [String: Double] = [:]
                for line in p.stdout.split(separator: "\n") {
                    let f = line.split(separator: ",")
                    if f.count == 2, let d = Double(f[1]) { durations[String(f[0])] = d }
                }
                let video = try XCTUnwrap(durations["video"], p.stdout), audio = try XCTUnwrap(durations["audio"], p.stdout)
                XCTAssertEqual(video, Double(frames) / 60, accuracy: 0.0011, "\(ext) \(extra) \(frames) frames")
                XCTAssertEqual(audio, video, accuracy: 0.0011, "\(ext) \(extra) \(frames) frames: audio \(audio) s, video \(video) s")
            }
        }
    }

    /// Real time for 16 s with two sound sources, one clock 0.2 % fast and the other 0.2 %
    /// slow (as far off by the end as 30 s at 0.1 %: uncorrected, 26 to 30 ms at the last
    /// three flashes; at 0.4 % the correction's own lag put the tracks 8 ms apart), each on
    /// its own track: every track's offset between a click and its flash
    /// stays within 20 ms at the start and at the end, the tracks within 5 ms of each other
    /// there, and each drift was corrected by resampling, not by cutting.
    func testRealtimeSyncHoldsPerTrackWithAudioClocksThatRunOffInOppositeWays() throws {
        let skews = [0.002, -0.002]
        let out = dir.appendingPathComponent("skew.mp4").path, stats = dir.appendingPathComponent("skew.json").path
        // (The default preset: B-frames, whose reorder delay the fragments must not turn into an offset.)
        let r = try spawnTracked(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "16",
                                  "--audio", "synthetic,skew=\(skews[0])", "--audio", "synthetic,skew=\(skews[1])",
                                  "--stats-json", stats, "--quiet", "-o", out]).wait(timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tracks = try XCTUnwrap(json?["audioTracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.count, 2)
        var perTrack: [[Double]] = []
        for (track, skew) in skews.enumerated() {
            let (flashes, offsets) = try offsets(out, width: 320, height: 240, track: track)
            XCTAssertGreaterThanOrEqual(flashes.count, 15, "skew \(skew): flashes \(flashes)")
            let first = offsets.prefix(3), last = offsets.suffix(3)
            for o in first + last {
                XCTAssertLessThanOrEqual(abs(o), 0.020, "skew \(skew): offsets \(offsets.map { ($0 * 1000).rounded() }) ms")
            }
            perTrack.append(Array(first + last))
            let sync = try XCTUnwrap(tracks[track]["sync"] as? [String: Any])
            XCTAssertGreaterThan(int(sync["compensatedBuffers"]) ?? 0, 100, "skew \(skew): \(sync)")
            // A fast clock gives more samples than time: they are squeezed (a negative ratio).
            XCTAssertEqual((double(sync["ratio"]) ?? 0) < 0, skew > 0, "skew \(skew): \(sync)")
            XCTAssertEqual(int(sync["silenceInsertions"]), 0, "\(sync)")
            XCTAssertEqual(int(sync["dropEvents"]), 0, "\(sync)")
        }
        if perTrack.count == 2, perTrack[0].count == perTrack[1].count {
            for (a, b) in zip(perTrack[0], perTrack[1]) {
                XCTAssertLessThanOrEqual(abs(a - b), 0.005, "the tracks apart: \(perTrack.map { $0.map { ($0 * 1000).rounded() } }) ms")
            }
        }
    }

    /// Killed while recording with sound: both tracks decode up to the last fragment, and
    /// `repair` keeps both.
    func testKilledRecordingKeepsBothTracksAndRepairKeepsThem() throws {
        let out = dir.appendingPathComponent("kill.mp4").path, log = dir.appendingPathComponent("kill.csv").path
        let child = try spawnTracked(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "60", "--quiet",
                                      "--audio", "synthetic", "--timing-log", log, "-o", out])
        let killed = TimingLogFile.signal([(child, log, 105, SIGKILL)])[0]
        _ = child.wait(timeout: 10)
        XCTAssertNotNil(killed, "the recording never reached 3.5 s")
        let videoFrames = try XCTUnwrap(int(try FF.probe(out).stream["nb_read_frames"]))
        let audioSeconds = Double(try AudioCheck.decode(out).count) / 48_000
        XCTAssertGreaterThanOrEqual(Double(videoFrames) / 30, 1.5)
        XCTAssertEqual(audioSeconds, Double(videoFrames) / 30, accuracy: 1.1, "audio and video both reach the last fragment")
        let fixed = dir.appendingPathComponent("fixed.mp4").path
        let r = try Proc.run(binary, ["repair", out, "-o", fixed])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(int(try FF.probe(fixed).stream["nb_read_frames"]), videoFrames)
        XCTAssertEqual(Double(try AudioCheck.decode(fixed).count) / 48_000, audioSeconds, accuracy: 0.05)
    }

    /// Pausing joins the sound as it joins the pictures: no gap, and the clicks still land
    /// on their flashes after the pause.
    func testPauseJoinsTheAudioWithoutAGap() throws {
        let out = dir.appendingPathComponent("pause.mp4").path, log = dir.appendingPathComponent("pause.csv").path
        let child = try spawnTracked(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "6", "--quiet",
                                      "--audio", "synthetic", "--timing-log", log, "-o", out])
        _ = TimingLogFile.signal([(child, log, 60, SIGUSR1)])
        Thread.sleep(forTimeInterval: 1.0)
        child.signal(SIGUSR1)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let pcm = try AudioCheck.decode(out)
        let frames = try XCTUnwrap(int(try FF.probe(out).stream["nb_read_frames"]))
        XCTAssertEqual(Double(pcm.count) / 48_000, Double(frames) / 30, accuracy: 0.03)
        // The tone never stops for more than the 10 ms of the fades around the join. (Up to
        // the pictures' end: ffmpeg decodes the last AAC frame whole, its padding as silence
        // after the end the edit list gives.)
        var quiet = 0, longest = 0
        for s in pcm.prefix(frames * 48_000 / 30) { quiet = abs(s) < 0.01 ? quiet + 1 : 0; longest = max(longest, quiet) }
        XCTAssertLessThan(Double(longest) / 48_000, 0.012, "a silence of \(Double(longest) / 48) ms")
        let rows = TimingLogFile.rows(log)
        XCTAssertTrue(rows.contains { $0.reason == "paused" } && rows.contains { $0.reason == "resumed" })
    }

    /// Examples/ScreenCaptureWithSound, run as built: pictures and sound appended side by
    /// side from two capture threads through the public API, AAC 48 kHz stereo beside
    /// H.264, each click within 20 ms of its flash (real time, host-clock times).
    func testScreenCaptureWithSoundExample() throws {
        let example = PackagePaths.product("ScreenCaptureWithSound")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: example), "ScreenCaptureWithSound not built")
        let out = dir.appendingPathComponent("capture.mp4").path
        let r = try Proc.run(example, [out, "4"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let audio = try AudioCheck.probe(out)
        XCTAssertEqual(audio["codec_name"] as? String, "aac")
        XCTAssertEqual(int(audio["sample_rate"]), 48_000)
        XCTAssertEqual(int(audio["channels"]), 2)
        // (The capture threads stop on their own: a flash in the last picture may come after the last sound.)
        let (pcm, start) = try AudioCheck.decodeTimed(out)
        let soundEnd = start + Double(pcm.count) / 48_000
        let flashes = try AudioCheck.flashTimes(out, width: 640, height: 360).filter { $0 < soundEnd - 0.05 }
        let offsets = AudioCheck.offsets(flashes: flashes, clicks: AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + start })
        XCTAssertGreaterThanOrEqual(flashes.count, 3, "flashes at \(flashes)")
        for o in offsets {
            XCTAssertLessThanOrEqual(abs(o), 0.020, "offsets \(offsets.map { ($0 * 1000).rounded() }) ms")
        }
    }

    func testAudioOptionErrorsAreClear() throws {
        var r = try record(["--source", "synthetic", "--frames", "5", "--audio", "nosuch", "-o", dir.appendingPathComponent("a.mp4").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("unknown audio source 'nosuch'"), r.stderr)
        r = try record(["--source", "synthetic", "--frames", "5", "--audio", "synthetic", "--audio-codec", "aac", "--codec", "vp9",
                        "-o", dir.appendingPathComponent("a.webm").path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot carry aac"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("a.webm").path))
        r = try record(["--source", "synthetic", "--frames", "5", "--realtime", "--audio", "synthetic", "--audio-bitrate", "lots",
                        "-o", dir.appendingPathComponent("b.mp4").path])
        XCTAssertEqual(r.status, 64, "a usage error")
        XCTAssertTrue(r.stderr.contains("--audio-bitrate") || r.stderr.contains("lots"), r.stderr)
    }
}
