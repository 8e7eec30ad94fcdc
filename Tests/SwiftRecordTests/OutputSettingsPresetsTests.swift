// WriterPortingTests: Apple's other writer spellings.
//
// - testEveryPresetIsAcceptedByCanApplyAndWritesItsSize: each preset's settings pass
//   canApply and a writer made from them writes a file of the preset's size and codec (ffprobe).
// - testCanApplyMatchesWhatStartWritingAccepts: canApply false for an unknown key, an odd
//   size for 4:2:0, HEVC in WebM, a profile H.264 lacks; startWriting refuses the same.
// - testURLSpellingAndLanguageCode: AVAssetWriter(url:fileType:) writes; languageCode "fra"
//   is the stream's language tag (ffprobe); a bad code is refused by startWriting.
import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class OutputSettingsPresetsTests: FileTestCase {
    /// Writes three frames through an input made from `settings`; returns the file's first stream.
    func writeThree(_ settings: [String: Any], to url: URL) async throws -> [String: Any] {
        let writer = AssetWriter(url: url, fileType: .mp4)
        let input = try AssetWriterInput(mediaType: .video, outputSettings: settings)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<3 {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(b, value: UInt8(60 + 40 * i))
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        return try FF.probe(url.path).stream
    }

    func testEveryPresetIsAcceptedByCanApplyAndWritesItsSize() async throws {
        let available = OutputSettingsAssistant.availableOutputSettingsPresets()
        XCTAssertEqual(Set(available), Set(OutputSettingsPreset.allCases), "this FFmpeg has libx264 and libx265 (scripts/install-deps.sh)")
        let probe = AssetWriter(url: dir.appendingPathComponent("probe.mp4"), fileType: .mp4)
        for preset in [OutputSettingsPreset.preset640x480, .preset1280x720, .hevc1920x1080] {
            let assistant = try XCTUnwrap(OutputSettingsAssistant(preset: preset))
            let video = try XCTUnwrap(assistant.videoSettings)
            XCTAssertTrue(probe.canApply(outputSettings: video, forMediaType: .video), "\(preset)")
            XCTAssertTrue(probe.canApply(outputSettings: assistant.audioSettings, forMediaType: .audio), "\(preset)")
            let stream = try await writeThree(video, to: dir.appendingPathComponent("\(preset).mp4"))
            XCTAssertEqual(stream["width"] as? Int, preset == .preset640x480 ? 640 : (preset == .hevc1920x1080 ? 1920 : 1280))
            XCTAssertEqual(stream["codec_name"] as? String, preset == .hevc1920x1080 ? "hevc" : "h264")
            XCTAssertEqual(stream["nb_read_frames"] as? String, "3")
        }
        // The large ones are opened by canApply (not written: seconds of encoding for nothing).
        for preset in [OutputSettingsPreset.preset960x540, .preset1920x1080, .preset3840x2160, .hevc3840x2160] {
            let video = try XCTUnwrap(OutputSettingsAssistant(preset: preset)?.videoSettings)
            XCTAssertTrue(probe.canApply(outputSettings: video, forMediaType: .video), "\(preset)")
        }
        XCTAssertEqual(OutputSettingsAssistant(preset: .preset1280x720)?.outputFileType, .mp4)
    }

    func testCanApplyMatchesWhatStartWritingAccepts() async throws {
        let mp4 = AssetWriter(url: dir.appendingPathComponent("a.mp4"), fileType: .mp4)
        let webm = AssetWriter(url: dir.appendingPathComponent("a.webm"), fileType: .webm)
        let good: [String: Any] = [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 320, AVVideoHeightKey: 240]
        XCTAssertTrue(mp4.canApply(outputSettings: good, forMediaType: .video))
        XCTAssertTrue(mp4.canApply(outputSettings: nil, forMediaType: .video), "pass-through")
        XCTAssertFalse(webm.canApply(outputSettings: good, forMediaType: .video), "WebM carries no H.264")
        var unknownKey = good
        unknownKey["AVVideoScalingModeKey"] = "AVVideoScalingModeFit"
        XCTAssertFalse(mp4.canApply(outputSettings: unknownKey, forMediaType: .video))
        XCTAssertFalse(mp4.canApply(outputSettings: good, forMediaType: .audio), "video keys for an audio input")
        XCTAssertTrue(webm.canApply(outputSettings: [AVFormatIDKey: kAudioFormatOpus], forMediaType: .audio))
        XCTAssertFalse(webm.canApply(outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC], forMediaType: .audio))
        // Accepted by the dictionary reader, refused by the encoder: canApply finds it, as startWriting does.
        var odd = good
        odd[AVVideoWidthKey] = 321
        XCTAssertFalse(mp4.canApply(outputSettings: odd, forMediaType: .video))
        var badProfile = good
        badProfile[AVVideoCompressionPropertiesKey] = [AVVideoProfileLevelKey: "HEVC_Main10_AutoLevel"]
        XCTAssertFalse(mp4.canApply(outputSettings: badProfile, forMediaType: .video))
        for settings in [odd] {
            let writer = AssetWriter(url: dir.appendingPathComponent("odd.mp4"), fileType: .mp4)
            try writer.add(try AssetWriterInput(mediaType: .video, outputSettings: settings))
            XCTAssertThrowsError(try writer.startWriting()) { error in
                XCTAssertTrue((error as? SwiftRecordError)?.message.contains("odd") == true, "\(error)")
            }
        }
    }

    func testURLSpellingAndLanguageCode() async throws {
        let url = dir.appendingPathComponent("lang.mp4")
        let writer = AssetWriter(url: url, fileType: .mp4)
        XCTAssertEqual(writer.outputURL, url)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 48, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        input.languageCode = "fra"
        input.performsMultiPassEncodingIfSupported = true
        XCTAssertFalse(input.canPerformMultiplePasses)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
        fill(b, value: 90)
        try syncAppend(adaptor, b, .zero)
        input.markAsFinished()
        try await writer.finishWriting()
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream_tags=language", "-of", "default=nw=1", url.path])
        XCTAssertTrue(r.stdout.contains("TAG:language=fra"), r.stdout)

        let bad = AssetWriter(url: dir.appendingPathComponent("bad.mp4"), fileType: .mp4)
        let badInput = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 48))
        badInput.languageCode = "French"
        try bad.add(badInput)
        XCTAssertThrowsError(try bad.startWriting()) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.message.contains("ISO 639-2") == true, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.mp4").path))
    }
}
