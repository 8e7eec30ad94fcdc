import Foundation
import SwiftRecord
import TestSupport
import XCTest

// ExportPresetTests: AssetExportSession's re-encoding presets, metadata, states and
// single-track compositions (issue 41), checked with ffprobe and ffmpeg.
//
// - testSizePresetsFitInsideAndKeepTheAspect: 800x450 with AVAssetExportPreset640x480 gives
//   640x360; 320x240 is not scaled up; timeRange 0.5–2 s gives 1.5 s of pictures and of
//   sound (within a frame and an AAC frame); the title is in the container; the presets
//   listed are the ones this FFmpeg encodes.
// - testJoinOfOtherSettingsIsBroughtToTheFirst: 320x240 30 fps 48 kHz, 160x120 25 fps
//   44.1 kHz mono, 320x240 again (1, 1.52, 1 s), each with a white frame and a click half a
//   second in: passthrough refuses naming the picture size; HighestQuality writes 320x240,
//   3.52 s, the flashes at 0.5, 1.52 and 3.02 s and each click within 20 ms of its flash;
//   audio packets follow one another without a gap (ffprobe packet times).
// - testSingleTrackInsertsAndEmptyStretches: pictures of one file, sound of another,
//   an empty stretch at the end of the pictures (black) and a removed range: durations and
//   content checked; passthrough refuses, naming the single track's insert; a 16:9 part
//   after a 4:3 one is fitted inside 320x240 with black bars (pixels read by ffmpeg).
// - testStatesAndCancel: states(updateInterval:) says .pending before the export, then
//   .exporting with rising progress to 1, and ends with the export; a re-encode cancelled at its first progress
//   step throws .cancelled and leaves nothing in the folder.
final class ExportPresetTests: FileTestCase {
    /// A clip with a white frame and a 2-ms click at `flash` seconds (else black and silent).
    func clip(_ name: String, size: String, rate: Int, seconds: Double, sampleRate: Int = 48_000, channels: Int = 2, flashFrame: Int) throws -> URL {
        let p = path(name)
        let flash = Double(flashFrame) / Double(rate)
        let click = "if(between(t\\,\(flash)\\,\(flash + 0.002))\\,0.9\\,0)"
        try FF.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=\(size):r=\(rate),drawbox=c=white:t=fill:enable='eq(n\\,\(flashFrame))'",
                       "-f", "lavfi", "-i", "aevalsrc=\(click):s=\(sampleRate):c=\(channels == 1 ? "mono" : "stereo")",
                       "-t", "\(seconds)", "-c:v", "libx264", "-g", "15", "-threads", "1", "-c:a", "aac", "-b:a", "128k", p])
        return URL(fileURLWithPath: p)
    }

    func tone(_ name: String, seconds: Double, frequency: Int, size: String = "320x240") throws -> URL {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-f", "lavfi", "-i", "sine=f=\(frequency):sample_rate=48000",
                       "-t", "\(seconds)", "-c:v", "libx264", "-g", "30", "-threads", "1", "-c:a", "aac", p])
        return URL(fileURLWithPath: p)
    }

    func probe(_ p: String, _ stream: String, _ entries: String) throws -> [String] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", entries, "-of", "csv=p=0", p])
        XCTAssertTrue(r.succeeded, r.stderr)
        return r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func duration(_ p: String, _ stream: String) throws -> Double {
        Double(try probe(p, stream, "stream=duration").first ?? "") ?? -1
    }

    func export(_ session: AssetExportSession, _ name: String) async throws -> String {
        let out = path(name)
        try await session.export(to: URL(fileURLWithPath: out), as: .mp4)
        XCTAssertEqual(session.status, .completed)
        let warnings = try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", out, "-f", "null", "-"])
        XCTAssertEqual(warnings.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "decoding \(name) warned")
        return out
    }

    func testSizePresetsFitInsideAndKeepTheAspect() async throws {
        XCTAssertTrue(AssetExportSession.allExportPresets.contains(AssetExportSession.preset640x480))
        XCTAssertEqual(AssetExportSession.allExportPresets.contains(AssetExportSession.presetHEVC1920x1080),
                       try Proc.run("ffmpeg", ["-v", "error", "-h", "encoder=libx265"]).stdout.contains("libx265"))
        let wide = try clip("wide.mp4", size: "800x450", rate: 30, seconds: 1, flashFrame: 5)
        let session = try AssetExportSession(asset: wide, presetName: AssetExportSession.preset640x480)
        XCTAssertEqual(session.supportedFileTypes, [.mp4, .mov, .mkv])
        XCTAssertTrue(AssetExportSession.compatibility(ofExportPreset: AssetExportSession.preset640x480, with: wide, outputFileType: .mp4))
        XCTAssertFalse(AssetExportSession.compatibility(ofExportPreset: AssetExportSession.preset640x480, with: wide, outputFileType: .webm))
        let out = try await export(session, "wide-640.mp4")
        XCTAssertEqual(try probe(out, "v", "stream=codec_name,width,height"), ["h264,640,360"])

        let small = try tone("small.mp4", seconds: 3, frequency: 440)
        let trim = try AssetExportSession(asset: small, presetName: AssetExportSession.preset640x480)
        trim.timeRange = TimeRange(start: MediaTime(seconds: 0.5, preferredTimescale: 600), end: MediaTime(seconds: 2, preferredTimescale: 600))
        trim.metadata = AssetMetadata(title: "A trimmed clip", custom: ["comment": "made by ExportPresetTests"])
        let cut = try await export(trim, "small-trim.mp4")
        XCTAssertEqual(try probe(cut, "v", "stream=width,height"), ["320,240"], "a smaller picture is not scaled up")
        XCTAssertEqual(try duration(cut, "v"), 1.5, accuracy: 0.034)
        XCTAssertEqual(try duration(cut, "a"), 1.5, accuracy: 0.022)
        XCTAssertEqual(try probe(cut, "a", "stream=codec_name"), ["aac"])
        XCTAssertEqual(try probe(cut, "v", "format_tags=title"), ["A trimmed clip"])
        XCTAssertEqual(try probe(cut, "v", "format_tags=comment"), ["made by ExportPresetTests"])
        // The first picture is the source's at 0.5 s (frame 15 of testsrc2), re-encoded.
        let first = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", cut, "-i", small.path, "-filter_complex",
                                            "[0:v]trim=end_frame=1[a];[1:v]trim=start_frame=15:end_frame=16,setpts=PTS-STARTPTS[b];[a][b]psnr", "-v", "info", "-f", "null", "-"])
        XCTAssertTrue(first.succeeded, first.stderr)
        let psnr = first.stderr.range(of: "average:").flatMap { Double(first.stderr[$0.upperBound...].prefix { $0 != " " }) }
        XCTAssertGreaterThan(psnr ?? 0, 30, "the first picture is not the source's at 0.5 s: \(first.stderr)")
    }

    func testJoinOfOtherSettingsIsBroughtToTheFirst() async throws {
        let a = try clip("a.mp4", size: "320x240", rate: 30, seconds: 1, flashFrame: 15)
        let b = try clip("b.mp4", size: "160x120", rate: 25, seconds: 1.5, sampleRate: 44_100, channels: 1, flashFrame: 13)
        let c = try clip("c.mp4", size: "320x240", rate: 30, seconds: 1, flashFrame: 15)
        let composition = MutableComposition()
        for url in [a, b, c] { try composition.insertTimeRange(nil, of: url, at: composition.duration) }
        let copy = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
        do {
            try await copy.export(to: URL(fileURLWithPath: path("copy.mp4")), as: .mp4)
            XCTFail("a copy joined other settings")
        } catch {
            XCTAssertTrue(error.message.contains("picture size 160x120, not 320x240"), error.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("copy.mp4")))

        let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetHighestQuality)
        let out = try await export(session, "joined.mp4")
        XCTAssertEqual(try probe(out, "v", "stream=width,height"), ["320,240"])
        XCTAssertEqual(try probe(out, "a", "stream=sample_rate,channels"), ["48000,2"])
        // b.mp4 lasts 1.52 s (38 pictures at 25 fps), its flash at 0.52 s.
        XCTAssertEqual(try duration(out, "v"), 3.52, accuracy: 0.034)
        XCTAssertEqual(try duration(out, "a"), 3.52, accuracy: 0.022)
        let flashes = try AudioCheck.flashTimes(out, width: 320, height: 240)
        let expected = [0.5, 1.0 + 0.52, 2.52 + 0.5]
        XCTAssertEqual(flashes.count, 3, "\(flashes)")
        for (f, e) in zip(flashes, expected) { XCTAssertEqual(f, e, accuracy: 0.021, "flashes \(flashes)") }
        let (samples, start) = try AudioCheck.decodeTimed(out)
        let clicks = AudioCheck.clickOnsets(samples, rate: 48_000).map { $0 + start }
        XCTAssertEqual(clicks.count, 3, "\(clicks)")
        for offset in AudioCheck.offsets(flashes: flashes, clicks: clicks) {
            XCTAssertLessThanOrEqual(abs(offset), 0.020, "sound and pictures apart at a join: clicks \(clicks), flashes \(flashes)")
        }
        // Audio packets one after another: no gap, no overlap at the joins.
        let packets = try probe(out, "a", "packet=pts_time,duration_time").compactMap { line -> (Double, Double)? in
            let f = line.split(separator: ",").compactMap { Double($0) }
            return f.count == 2 ? (f[0], f[1]) : nil
        }
        for (p, q) in zip(packets, packets.dropFirst()) { XCTAssertEqual(q.0, p.0 + p.1, accuracy: 0.0001, "audio packets at \(p.0)") }
    }

    func testSingleTrackInsertsAndEmptyStretches() async throws {
        let low = try tone("low.mp4", seconds: 2, frequency: 440)
        let high = try tone("high.mp4", seconds: 2, frequency: 1000)
        let composition = MutableComposition()
        let pictures = try XCTUnwrap(composition.addMutableTrack(withMediaType: .video))
        let sound = try XCTUnwrap(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: 7))
        XCTAssertNil(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: 7), "a number already taken")
        XCTAssertEqual(sound.trackID, 7)
        let video = try XCTUnwrap(AssetReader(url: low).tracks.first { $0.mediaType == .video })
        let voice = try XCTUnwrap(AssetReader(url: high).tracks.first { $0.mediaType == .audio })
        let second = MediaTime(seconds: 1, preferredTimescale: 600)
        XCTAssertThrowsError(try pictures.insertTimeRange(TimeRange(start: .zero, duration: second), of: voice, at: .zero))
        try pictures.insertTimeRange(TimeRange(start: .zero, duration: second), of: video, at: .zero)
        try pictures.insertEmptyTimeRange(TimeRange(start: second, duration: second))
        try sound.insertTimeRange(TimeRange(start: .zero, duration: MediaTime(seconds: 2, preferredTimescale: 600)), of: voice, at: .zero)
        sound.removeTimeRange(TimeRange(start: MediaTime(seconds: 1.5, preferredTimescale: 600), duration: MediaTime(seconds: 0.5, preferredTimescale: 600)))
        XCTAssertEqual(composition.duration.seconds, 2, accuracy: 1e-9)
        XCTAssertThrowsError(try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)) { error in
            XCTAssertTrue("\(error)".contains("single track"), "\(error)")
        }
        let session = try AssetExportSession(composition: composition, presetName: AssetExportSession.preset640x480)
        let out = try await export(session, "tracks.mp4")
        XCTAssertEqual(try duration(out, "v"), 2, accuracy: 0.034)
        XCTAssertEqual(try duration(out, "a"), 1.5, accuracy: 0.022)
        let black = try FF.rgb(out, x: 160, y: 120, at: 1.5)
        XCTAssertLessThan(black.0 + black.1 + black.2, 30, "the empty stretch is black: \(black)")
        let samples = try AudioCheck.decode(out)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(samples[4_800..<62_400], frequency: 1000), 0.9, "the sound is the other file's")

        // A recording of another aspect (16:9 after 4:3) is fitted inside the first's size, on black.
        let wide = try tone("wide.mp4", seconds: 1, frequency: 440, size: "320x180")
        let letterboxed = MutableComposition()
        try letterboxed.insertTimeRange(TimeRange(start: .zero, duration: second), of: low, at: .zero)
        try letterboxed.insertTimeRange(nil, of: wide, at: letterboxed.duration)
        let both = try await export(AssetExportSession(composition: letterboxed, presetName: AssetExportSession.presetHighestQuality), "letterboxed.mp4")
        XCTAssertEqual(try probe(both, "v", "stream=width,height"), ["320,240"])
        let top = try FF.rgb(both, x: 160, y: 10, at: 1.5), middle = try FF.rgb(both, x: 40, y: 120, at: 1.5)
        XCTAssertLessThan(top.0 + top.1 + top.2, 30, "a bar above the 16:9 part: \(top)")
        XCTAssertGreaterThan(middle.0 + middle.1 + middle.2, 60, "the 16:9 part's picture in the middle: \(middle)")
        let first = try FF.rgb(both, x: 160, y: 10, at: 0.5)
        XCTAssertGreaterThan(first.0 + first.1 + first.2, 60, "the 4:3 part fills the picture: \(first)")
    }

    func testStatesAndCancel() async throws {
        let src = try tone("src.mp4", seconds: 3, frequency: 440)
        let session = try AssetExportSession(asset: src, presetName: AssetExportSession.presetLowQuality)
        var before = session.states(updateInterval: 0.01).makeAsyncIterator()
        let notStarted = await before.next()
        XCTAssertEqual(notStarted, .pending)
        let collected = Task { () -> [AssetExportSession.State] in
            var states: [AssetExportSession.State] = []
            for await state in session.states(updateInterval: 0.01) { states.append(state) }
            return states
        }
        _ = try await export(session, "low.mp4")
        let states = await collected.value
        XCTAssertFalse(states.isEmpty)
        let progress = states.compactMap { if case .exporting(let p) = $0 { p } else { nil } }
        XCTAssertEqual(progress.last, 1, "\(states)")
        XCTAssertEqual(progress, progress.sorted(), "\(states)")

        let stopped = try AssetExportSession(asset: src, presetName: AssetExportSession.presetLowQuality)
        stopped.progressHandler = { _ in stopped.cancelExport() }
        do {
            try await stopped.export(to: URL(fileURLWithPath: path("stopped.mp4")), as: .mp4)
            XCTFail("a cancelled export completed")
        } catch {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertEqual(stopped.status, .cancelled)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("stopped") }, [])
    }
}
