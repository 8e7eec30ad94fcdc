import Foundation
import SwiftRecord
import TestSupport
import XCTest

// Several sound sources mixed into one track (issue 28, `--audio-mix`), through a private
// PulseAudio server with two null sinks, `test` playing 440 Hz and `other` playing 1000 Hz,
// both at the same level:
//  - testTwoSourcesMixAtTheirVolumesIntoOneTrack: `--audio pulse:test.monitor,volume=1
//    --audio pulse:other.monitor,volume=0.5 --audio-mix`: one audio track (ffprobe), titled
//    Mix, as long as the video within an audio frame, holding both tones, 1000 Hz's level
//    (Goertzel amplitude) within 1 dB of −6.02 dB against 440 Hz's; --stats-json has one
//    track with both sources and their volumes.
//  - testBadVolumesAreRefusedAndNothingIsWritten: volume=loud, volume=5, volume=+13dB, and a
//    volume without --audio-mix: exit 2, a message naming --audio and the expected form, no file.
//  - testDecibelVolumesSetTheLevel: volume=-12dB on the 1000 Hz source: its level within
//    1 dB of −12 dB against 440 Hz's.
//  - testASourceEndingEarlyLeavesTheMixGoingOn: the second sink unloaded mid-recording:
//    the mix goes on with 440 Hz to the end (at its level), the 1000 Hz tone gone, the track
//    as long as the video; said, counted per source, exit 0.
//  - testTheLibraryMixesAppendedSourcesAtTheirVolumes: no server needed: an audio-only
//    writer with `mixVolumes: [1, 0.25]`, 440 Hz appended as source 0 and 1000 Hz as
//    source 1 from 0.5 s on: 1000 Hz absent before 0.5 s, −12 dB against 440 Hz after (ffmpeg
//    decodes), 2 s long; a mix source out of range and a volume out of range are refused.
final class PulseMixTests: TwoTonesTestCase {
    private func audioStreams(_ path: String) throws -> [[String: Any]] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=index:stream_tags=title,handler_name",
                                         "-of", "json", path], timeout: 60)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return json?["streams"] as? [[String: Any]] ?? []
    }

    /// The amplitude of `frequency` in `samples`: a Goertzel filter over 50-ms windows (a
    /// whole number of periods of 440 and 1000 Hz), the median window's.
    private func amplitude(_ samples: ArraySlice<Float>, _ frequency: Double, rate: Int = 48_000) -> Double {
        let window = rate / 20
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        let amplitudes = stride(from: samples.startIndex, to: samples.endIndex - window + 1, by: window).map { start -> Double in
            var s1 = 0.0, s2 = 0.0
            for x in samples[start..<(start + window)] {
                let s0 = Double(x) + coefficient * s1 - s2
                s2 = s1
                s1 = s0
            }
            // A tone of amplitude A gives a power of (n·A/2)².
            return (max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)).squareRoot() * 2 / Double(window)
        }.sorted()
        return amplitudes.isEmpty ? 0 : amplitudes[amplitudes.count / 2]
    }

    private func decibels(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-9)) }

    /// The middle second of `samples`.
    private func middle(_ samples: [Float]) -> ArraySlice<Float> {
        samples[max(0, samples.count / 2 - 24_000)..<min(samples.count, samples.count / 2 + 24_000)]
    }

    private func checkLevels(volume: String, expectedDecibels: Double) throws {
        let out = dir.appendingPathComponent("mix.mp4").path, stats = dir.appendingPathComponent("mix.json").path
        let r = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "3",
                           "--audio", "pulse:test.monitor,volume=1", "--audio", "pulse:other.monitor,volume=\(volume)", "--audio-mix",
                           "--stats-json", stats, "-o", out]).wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let streams = try audioStreams(out)
        XCTAssertEqual(streams.count, 1, "one audio track: \(streams)")
        let tags = streams.first?["tags"] as? [String: Any] ?? [:]
        XCTAssertEqual((tags["title"] ?? tags["handler_name"]).map { "\($0)" }, "Mix")
        let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
        XCTAssertEqual(frames, 90)
        let pcm = try AudioCheck.decode(out)
        XCTAssertEqual(Double(pcm.count) / 48_000, Double(frames) / 30, accuracy: 1024.0 / 48_000 + 0.001, "as long as the video")
        let m = middle(pcm)
        let low = amplitude(m, 440), high = amplitude(m, 1000)
        XCTAssertGreaterThan(low, 0.1, "440 Hz is in the mix")
        XCTAssertGreaterThan(high, 0.01, "1000 Hz is in the mix")
        XCTAssertEqual(decibels(high / low), expectedDecibels, accuracy: 1,
                       "1000 Hz at \(volume) against 440 Hz: \(high) / \(low)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tracks = try XCTUnwrap(json?["audioTracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.count, 1)
        XCTAssertEqual(tracks.first?["title"] as? String, "Mix")
        let sources = try XCTUnwrap(tracks.first?["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.count, 2)
        XCTAssertEqual(sources.first?["volume"] as? Double, 1)
        XCTAssertEqual(sources.last?["volume"] as? Double ?? 0, pow(10, expectedDecibels / 20), accuracy: 0.01)
        for s in sources { XCTAssertGreaterThan(s["seconds"] as? Double ?? 0, 2, "\(s)") }
    }

    func testTwoSourcesMixAtTheirVolumesIntoOneTrack() throws {
        try checkLevels(volume: "0.5", expectedDecibels: -6.02)
    }

    func testDecibelVolumesSetTheLevel() throws {
        try checkLevels(volume: "-12dB", expectedDecibels: -12)
    }

    func testBadVolumesAreRefusedAndNothingIsWritten() throws {
        let cases: [([String], String)] = [
            (["--audio", "pulse:test.monitor,volume=loud", "--audio-mix"], "volume=loud is not a volume; expected a factor from 0 to 4"),
            (["--audio", "pulse:test.monitor,volume=5", "--audio-mix"], "volume=5 is out of range; expected a factor from 0 to 4"),
            (["--audio", "pulse:test.monitor", "--audio", "pulse:other.monitor,volume=+13dB", "--audio-mix"], "volume=+13dB is out of range"),
            (["--audio", "pulse:test.monitor,volume=0.5"], "volume=0.5 needs --audio-mix"),
        ]
        for (i, (options, message)) in cases.enumerated() {
            let out = dir.appendingPathComponent("bad-\(i).mp4").path
            let r = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "1"] + options + ["-o", out]).wait(timeout: 60)
            XCTAssertEqual(r.status, 2, "\(options): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("--audio"), r.stderr)
            XCTAssertTrue(r.stderr.contains(message), "\(options): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(options): nothing written")
        }
    }

    func testTheLibraryMixesAppendedSourcesAtTheirVolumes() async throws {
        let out = dir.appendingPathComponent("library.mp4")
        XCTAssertThrowsError(try AssetWriterInput(outputSettings: AudioSettings(), mixVolumes: [1, 5]))
        let writer = try AssetWriter(outputURL: out)
        let mix = try AssetWriterInput(outputSettings: AudioSettings(), mixVolumes: [1, 0.25])
        XCTAssertEqual(mix.mixVolumes, [1, 0.25])
        try writer.add(mix)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let format = AudioFormat(sampleType: .f32, sampleRate: 48_000)
        func tone(_ frequency: Double, at frame: Int) throws -> AudioSampleBuffer {
            let samples = (0..<1024).flatMap { i -> [Float] in
                let v = Float(0.5 * sin(2 * Double.pi * frequency * Double(frame + i) / 48_000))
                return [v, v]
            }
            return try AudioSampleBuffer(format: format, presentationTimeStamp: MediaTime(value: Int64(frame), timescale: 48_000),
                                         interleaved: samples)
        }
        XCTAssertThrowsError(try mix.append(try tone(440, at: 0), mixSource: 2)) { error in
            XCTAssertTrue("\(error)".contains("mixes 2 sources"), "\(error)")
        }
        for n in 0..<(2 * 48_000 / 1024) {
            try mix.append(try tone(440, at: n * 1024), mixSource: 0)
            if n * 1024 >= 24_000 { try mix.append(try tone(1000, at: n * 1024), mixSource: 1) }
        }
        mix.markAsFinished()
        try await writer.finishWriting()
        let pcm = try AudioCheck.decode(out.path)
        XCTAssertEqual(Double(pcm.count) / 48_000, Double(2 * 48_000 / 1024 * 1024) / 48_000, accuracy: 1024.0 / 48_000)
        let early = pcm[2_400..<21_600], late = pcm[48_000..<86_400]
        // (ffmpeg's mono downmix of two equal channels: 0.5 × √2.)
        XCTAssertEqual(amplitude(early, 440), 0.5 * 2.0.squareRoot(), accuracy: 0.05, "source 0 at volume 1")
        XCTAssertLessThan(amplitude(early, 1000), 0.005, "source 1 has not started")
        XCTAssertEqual(decibels(amplitude(late, 1000) / amplitude(late, 440)), -12.04, accuracy: 1, "source 1 at volume 0.25")
        XCTAssertEqual(mix.audioSyncStatistics(mixSource: 1).silenceInsertions, 0, "its leading silence is no correction")
    }

    func testASourceEndingEarlyLeavesTheMixGoingOn() throws {
        let out = dir.appendingPathComponent("loss.mp4").path, log = dir.appendingPathComponent("loss.csv").path
        let stats = dir.appendingPathComponent("loss.json").path
        let child = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "4",
                               "--audio", "pulse:test.monitor", "--audio", "pulse:other.monitor,volume=0.5", "--audio-mix",
                               "--timing-log", log, "--stats-json", stats, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 30), "the recording never reached 1.5 s")
        let modules = try server.pactl(["list", "short", "modules"]).stdout.split(separator: "\n")
        let other = try XCTUnwrap(modules.first { $0.contains("sink_name=other") }?.split(separator: "\t").first.map(String.init))
        // The player first: the server would move it to the other sink, mixing the tones there.
        otherPlayer?.terminate()
        try server.pactl(["unload-module", other])
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("audio source 2 (Desktop) of the mix ended early"), r.stderr)
        XCTAssertEqual(try audioStreams(out).count, 1)
        let frames = try XCTUnwrap(Int("\(try FF.probe(out).stream["nb_read_frames"] ?? "")"))
        XCTAssertEqual(frames, 120)
        let pcm = try AudioCheck.decode(out)
        XCTAssertEqual(Double(pcm.count) / 48_000, 4, accuracy: 1024.0 / 48_000 + 0.001, "as long as the video")
        let before = pcm[24_000..<60_000], last = pcm[(pcm.count - 48_000)...]
        XCTAssertGreaterThan(amplitude(before, 1000), 0.1, "the second source was in the mix before")
        let low = amplitude(before, 440)
        XCTAssertGreaterThan(low, 0.2)
        XCTAssertEqual(decibels(amplitude(last, 440) / low), 0, accuracy: 1, "the first source goes on at its level to the end")
        XCTAssertLessThan(amplitude(last, 1000), 0.005, "the ended source is silent to the end")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tracks = try XCTUnwrap(json?["audioTracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.count, 1)
        let sources = try XCTUnwrap(tracks.first?["sources"] as? [[String: Any]])
        XCTAssertNil(sources[0]["endedEarly"])
        XCTAssertNotNil(sources[1]["endedEarly"])
        XCTAssertGreaterThan(sources[1]["silenceFilledSeconds"] as? Double ?? 0, 1)
    }
}
