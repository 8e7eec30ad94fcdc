import Foundation
import TestSupport
import XCTest

/// A requested sound track is never absent or short (issue 37, 3 and 16): a source that
/// delivers nothing before the end, or stops delivering without ending, has its track
/// filled with silence to the video's end, said, and counted in --stats-json.
/// - testAProgramThatNeverPlaysKeepsItsTrackInOrder (3): `app:NeverPlays,title=App` then
///   `pulse:test.monitor,title=Idle` into MP4: two tracks, App first, each as long as the
///   video (before: one track, Idle, first).
/// - testAFrozenServerFillsTheRestWithSilence (16): the server SIGSTOPped 2 s into a 4-s
///   recording: the audio lasts 4 s, not 2, and the run says so (before: 1.9 s, silent).
final class PulseSilentSourceTests: PulseCLITestCase {
    func stats(_ path: String) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        return try XCTUnwrap(object?["audioTracks"] as? [[String: Any]], "\(String(describing: object))")
    }

    func audioStreams(_ path: String) throws -> [(title: String, seconds: Double)] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=duration:stream_tags=title,handler_name",
                                         "-of", "json", path])
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let streams = object?["streams"] as? [[String: Any]] ?? []
        return streams.map { s in
            let tags = s["tags"] as? [String: Any]
            return ((tags?["title"] ?? tags?["handler_name"]) as? String ?? "", Double(s["duration"] as? String ?? "") ?? 0)
        }
    }

    func testAProgramThatNeverPlaysKeepsItsTrackInOrder() throws {
        let out = dir.appendingPathComponent("app.mp4").path, json = dir.appendingPathComponent("app.json").path
        let r = try spawn(["--source", "synthetic", "--size", "160x96", "--realtime", "--duration", "2",
                           "--audio", "app:NeverPlays,title=App", "--audio", "pulse:test.monitor,title=Idle",
                           "--stats-json", json, "-o", out]).wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("delivered no sound"), r.stderr)
        let streams = try audioStreams(out)
        XCTAssertEqual(streams.map(\.title), ["App", "Idle"], "one track per source, in the order given")
        for s in streams { XCTAssertEqual(s.seconds, 2, accuracy: 0.05, "\(s.title) lasts as long as the video") }
        let tracks = try stats(json)
        XCTAssertEqual(tracks.count, 2)
        XCTAssertGreaterThan(tracks[0]["silenceFilledSeconds"] as? Double ?? 0, 1.9, "\(tracks[0])")
        XCTAssertNotNil(tracks[0]["endedEarly"] as? String, "\(tracks[0])")
        let decode = try Proc.run("ffmpeg", ["-v", "warning", "-i", out, "-map", "0", "-f", "null", "-"])
        XCTAssertTrue(decode.succeeded && decode.stderr.isEmpty, decode.stderr)
        let gst = try GStreamer.decode(out, streams: (1, 2))
        XCTAssertTrue(gst.succeeded, "GStreamer: \(gst.stderr.suffix(600))")
    }

    /// Issue 37, 27: an MKV whose AAC arrives after the first cluster (here the whole track,
    /// filled at the end) made libavformat print "failed to avoid negative pts -21"; every
    /// stream is now moved by AAC's priming from the start, so none is negative.
    func testLateSoundInMatroskaStartsAtZeroWithoutAWarning() throws {
        let out = dir.appendingPathComponent("late.mkv").path
        let r = try spawn(["--source", "synthetic", "--size", "160x96", "--realtime", "--duration", "2",
                           "--audio", "app:NeverPlays", "-o", out]).wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("negative"), r.stderr)
        let starts = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", out])
        XCTAssertEqual(starts.stdout.split(separator: "\n").map(String.init), ["video,0.021000", "audio,0.000000"], "AAC's priming before the pictures, as when libavformat moves it")
        let decode = try Proc.run("ffmpeg", ["-v", "warning", "-i", out, "-map", "0", "-f", "null", "-"])
        XCTAssertTrue(decode.succeeded && decode.stderr.isEmpty, decode.stderr)
    }

    func testAFrozenServerFillsTheRestWithSilence() throws {
        let tone = dir.appendingPathComponent("tone.raw").path
        try writeTone(to: tone, seconds: 30, frequency: 440)
        track(try server.play(tone))
        // An idle null sink sleeps in long blocks: let it wake before recording.
        Thread.sleep(forTimeInterval: 1)
        let out = dir.appendingPathComponent("frozen.mp4").path, log = dir.appendingPathComponent("frozen.csv").path
        let json = dir.appendingPathComponent("frozen.json").path
        let child = try spawn(["--source", "synthetic", "--size", "160x96", "--realtime", "--duration", "4",
                               "--audio", "pulse:test.monitor", "--timing-log", log, "--stats-json", json, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 30), "the recording never reached 2 s")
        kill(server.pid, SIGSTOP)
        let r = child.wait(timeout: 60)
        kill(server.pid, SIGCONT)
        XCTAssertFalse(r.timedOut, "a frozen server must not hold up the end")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("delivered nothing for the last"), r.stderr)
        let streams = try audioStreams(out)
        XCTAssertEqual(streams.count, 1)
        XCTAssertEqual(streams.first?.seconds ?? 0, 4, accuracy: 0.05, "the track lasts as long as the video")
        let filled = try stats(json).first?["silenceFilledSeconds"] as? Double ?? 0
        XCTAssertGreaterThan(filled, 1, "the frozen part is counted as silence")
        let gst = try GStreamer.decode(out, streams: (1, 1))
        XCTAssertTrue(gst.succeeded, "GStreamer: \(gst.stderr.suffix(600))")
        let pcm = try AudioCheck.decode(out)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(pcm[48_000..<72_000], frequency: 440), 0.5, "the tone before the freeze")
    }
}
