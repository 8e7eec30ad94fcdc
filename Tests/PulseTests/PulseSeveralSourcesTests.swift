import Foundation
import TestSupport
import XCTest

// Several sound sources at once (issue 28), through a private PulseAudio server with two
// null sinks, `test` playing 440 Hz and `other` playing 1000 Hz:
//  - testTwoMonitorsAreTwoTitledTracksEachWithItsOwnTone: `--audio pulse:test.monitor
//    --audio pulse:other.monitor,title=Voice` in MP4, MKV and WebM (Opus): two audio
//    tracks, titled, each holding only its own tone (Goertzel share of each frequency),
//    each as long as the video within an audio frame; --stats-json has a figure per track.
//  - testASourceThatEndsEarlyLeavesTheOtherRecordingAndIsFilledWithSilence: the second
//    sink unloaded mid-recording: the first track goes on with its tone, the second is
//    silent from then on and still as long as the video; said, counted, exit 0.
final class PulseSeveralSourcesTests: TwoTonesTestCase {
    private func audioTitles(_ path: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream_tags=title,handler_name",
                                         "-of", "json", path], timeout: 60)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let streams = json?["streams"] as? [[String: Any]] ?? []
        return streams.map { s in
            let tags = s["tags"] as? [String: Any] ?? [:]
            return (tags["title"] ?? tags["handler_name"] ?? tags["HANDLER_NAME"]).map { "\($0)" } ?? ""
        }
    }

    /// The middle second of `samples`.
    private func middle(_ samples: [Float]) -> ArraySlice<Float> {
        samples[max(0, samples.count / 2 - 24_000)..<min(samples.count, samples.count / 2 + 24_000)]
    }

    private func share(_ samples: ArraySlice<Float>, _ frequency: Double) -> Double {
        AudioCheck.medianToneShare(samples, frequency: frequency)
    }

    func testTwoMonitorsAreTwoTitledTracksEachWithItsOwnTone() throws {
        for ext in ["mp4", "mkv", "webm"] {
            let out = dir.appendingPathComponent("two.\(ext)").path, stats = dir.appendingPathComponent("two-\(ext).json").path
            let r = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "3",
                               "--audio", "pulse:test.monitor", "--audio", "pulse:other.monitor,title=Voice",
                               "--stats-json", stats, "-o", out] + (ext == "webm" ? ["--codec", "vp9"] : [])).wait(timeout: 60)
            XCTAssertEqual(r.status, 0, "\(ext): \(r.stderr)")
            XCTAssertEqual(try audioTitles(out), ["Desktop", "Voice"], ext)
            let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
            XCTAssertEqual(frames, 90, ext)
            let statsText = (try? String(contentsOfFile: stats, encoding: .utf8)) ?? ""
            for (track, (own, other)) in [(440.0, 1000.0), (1000.0, 440.0)].enumerated() {
                let pcm = try AudioCheck.decode(out, track: track)
                // (MKV keeps AAC's 1024 samples of priming, which MP4's edit list and WebM's
                // codec delay hide: one more audio frame there.)
                XCTAssertEqual(Double(pcm.count) / 48_000, Double(frames) / 30, accuracy: (ext == "mkv" ? 2048.0 : 1024.0) / 48_000 + 0.001,
                               "\(ext) track \(track): as long as the video")
                let m = middle(pcm)
                XCTAssertGreaterThan(share(m, own), 0.8, "\(ext) track \(track) holds its own \(own) Hz \(statsText)")
                XCTAssertLessThan(share(m, other), 0.01, "\(ext) track \(track) holds none of \(other) Hz")
            }
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
            let tracks = try XCTUnwrap(json?["audioTracks"] as? [[String: Any]], ext)
            XCTAssertEqual(tracks.count, 2, ext)
            for t in tracks { XCTAssertGreaterThan(t["seconds"] as? Double ?? 0, 2, "\(ext): \(t)") }
        }
    }

    func testASourceThatEndsEarlyLeavesTheOtherRecordingAndIsFilledWithSilence() throws {
        let out = dir.appendingPathComponent("loss.mkv").path, log = dir.appendingPathComponent("loss.csv").path
        let stats = dir.appendingPathComponent("loss.json").path
        let child = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "5",
                               "--audio", "pulse:test.monitor", "--audio", "pulse:other.monitor",
                               "--timing-log", log, "--stats-json", stats, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 30), "the recording never reached 2 s")
        let sinks = try server.pactl(["list", "short", "modules"]).stdout.split(separator: "\n")
        let other = try XCTUnwrap(sinks.first { $0.contains("sink_name=other") }?.split(separator: "\t").first.map(String.init))
        // The player first: the server would move it to the other sink, mixing the tones there.
        otherPlayer?.terminate()
        try server.pactl(["unload-module", other])
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("audio track 2 (Desktop) ended early"), r.stderr)
        let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
        XCTAssertEqual(frames, 150)
        let first = try AudioCheck.decode(out, track: 0), second = try AudioCheck.decode(out, track: 1)
        for pcm in [first, second] {
            // (MKV keeps AAC's priming: one audio frame more.)
            XCTAssertEqual(Double(pcm.count) / 48_000, 5, accuracy: 2048.0 / 48_000 + 0.001, "each track as long as the video")
        }
        let lastSecond = { (pcm: [Float]) in pcm[(pcm.count - 48_000)...] }
        XCTAssertGreaterThan(share(lastSecond(first), 440), 0.8, "the first source went on recording")
        XCTAssertLessThan(AudioCheck.rms(lastSecond(second)), 0.001, "the ended source's track is silent to the end")
        XCTAssertGreaterThan(share(second[24_000..<72_000], 1000), 0.8, "it had its tone before")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tracks = try XCTUnwrap(json?["audioTracks"] as? [[String: Any]])
        XCTAssertNil(tracks[0]["endedEarly"])
        XCTAssertNotNil(tracks[1]["endedEarly"])
        XCTAssertGreaterThan(tracks[1]["silenceFilledSeconds"] as? Double ?? 0, 1)
    }
}
