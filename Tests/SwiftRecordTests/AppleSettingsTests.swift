import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// Settings pasted from AVFoundation code: Apple's keys, constants and profile strings.
final class AppleSettingsTests: XCTestCase {
    func testDictionaryWithApplesKeys() throws {
        let s = try VideoSettings(outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: 1280, AVVideoHeightKey: 720,
            AVVideoCompressionPropertiesKey: [
                AVVideoAverageBitRateKey: 2_000_000,
                AVVideoMaxKeyFrameIntervalKey: 60,
                AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
                AVVideoExpectedSourceFrameRateKey: 29.97,
                AVVideoAllowFrameReorderingKey: false,
            ] as [String: Any],
        ])
        XCTAssertEqual(s.codec, .h264)
        XCTAssertEqual(s.width, 1280)
        XCTAssertEqual(s.height, 720)
        XCTAssertEqual(s.averageBitRate, 2_000_000)
        XCTAssertEqual(s.maxKeyFrameInterval, 60)
        XCTAssertEqual(s.expectedSourceFrameRate, Rational(30000, 1001))
        XCTAssertEqual(s.profileLevel, .h264(.high, level: .auto))
        XCTAssertEqual(s.encoderOptions["bf"], "0")
        // The constants' names as strings, and codec four-character codes, work too.
        let named = try VideoSettings(outputSettings: ["AVVideoCodecKey": "hvc1", "AVVideoWidthKey": 64.0, "AVVideoHeightKey": NSNumber(value: 64),
                                                       "AVVideoCompressionPropertiesKey": ["AVVideoProfileLevelKey": "HEVC_Main10_AutoLevel"]])
        XCTAssertEqual(named.codec, .hevc)
        XCTAssertEqual(named.width, 64)
        XCTAssertEqual(named.profileLevel, .hevc(.main10, level: .auto))
    }

    func testBadDictionariesNameTheKey() {
        func message(_ d: [String: Any]) -> String {
            do { _ = try VideoSettings(outputSettings: d); return "no error" } catch { return error.message }
        }
        let unknown = message([AVVideoWidthKey: 64, AVVideoHeightKey: 64, "AVVideoQualityKey": 0.5])
        XCTAssertTrue(unknown.contains("unknown key 'AVVideoQualityKey'") && unknown.contains("AVVideoCodecKey"), unknown)
        let nested = message([AVVideoWidthKey: 64, AVVideoHeightKey: 64, AVVideoCompressionPropertiesKey: ["Quality": 1]])
        XCTAssertTrue(nested.contains("unknown key 'Quality'") && nested.contains("AVVideoAverageBitRateKey"), nested)
        let kind = message([AVVideoWidthKey: "wide", AVVideoHeightKey: 64])
        XCTAssertTrue(kind.contains("AVVideoWidthKey") && kind.contains("whole number"), kind)
        let missing = message([AVVideoWidthKey: 64])
        XCTAssertTrue(missing.contains("AVVideoHeightKey"), missing)
        let rate = message([AVVideoWidthKey: 64, AVVideoHeightKey: 64, AVVideoCompressionPropertiesKey: [AVVideoAverageBitRateKey: -5]])
        XCTAssertTrue(rate.contains("AVVideoAverageBitRateKey") && rate.contains("positive"), rate)
        let codec = message([AVVideoCodecKey: "jpeg", AVVideoWidthKey: 64, AVVideoHeightKey: 64])
        XCTAssertTrue(codec.contains("AVVideoCodecKey") && codec.contains("avc1"), codec)
        let profile = message([AVVideoWidthKey: 64, AVVideoHeightKey: 64, AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: "HEVC_Main_AutoLevel"]])
        XCTAssertTrue(profile.contains("HEVC_Main_AutoLevel") && profile.contains("high"), profile)
        XCTAssertThrowsError(try AssetWriterInput(mediaType: .video, outputSettings: [AVVideoWidthKey: 64]))
    }

    func testAudioDictionaryWithApplesKeys() throws {
        let input = try AssetWriterInput(mediaType: .audio, outputSettings: [
            AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 1, AVEncoderBitRateKey: 96_000,
        ])
        XCTAssertEqual(input.mediaType, .audio)
        XCTAssertEqual(input.audioSettings, AudioSettings(codec: .aac, sampleRate: 44_100, channelLayout: .mono, bitRate: 96_000))
        XCTAssertNil(input.videoSettings)
        XCTAssertEqual(try AudioSettings(outputSettings: ["AVFormatIDKey": Int(kAudioFormatOpus)]).codec, .opus)
        func message(_ d: [String: Any]) -> String {
            do { _ = try AudioSettings(outputSettings: d); return "no error" } catch { return error.message }
        }
        let lpcm = message([AVFormatIDKey: 0x6C70_636D])
        XCTAssertTrue(lpcm.contains("AVFormatIDKey") && lpcm.contains("kAudioFormatMPEG4AAC"), lpcm)
        let channels = message([AVNumberOfChannelsKey: 0])
        XCTAssertTrue(channels.contains("AVNumberOfChannelsKey") && channels.contains("1 to 8"), channels)
        let videoKey = message([AVVideoWidthKey: 64])
        XCTAssertTrue(videoKey.contains("unknown key") && videoKey.contains("AVSampleRateKey"), videoKey)
    }

    func testProfileSpellings() throws {
        let cases: [(String, VideoProfileLevel)] = [
            ("high", .h264(.high)), ("H264_High_AutoLevel", .h264(.high)), ("AVVideoProfileLevelH264HighAutoLevel", .h264(.high)),
            ("H264_Main_3_1", .h264(.main, level: .level(3, 1))), ("AVVideoProfileLevelH264High41", .h264(.high, level: .level(4, 1))),
            ("H264_ConstrainedBaseline_AutoLevel", .h264(.baseline)), ("high@4.1", .h264(.high, level: .level(4, 1))),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try VideoProfileLevel(parsing: text, codec: .h264), expected, text)
            XCTAssertEqual(try VideoProfileLevel(parsing: expected.profileString, codec: .h264), expected, "round trip of \(text)")
        }
        for bad in ["ultra", "H264_High_9_9", "H264_High_4", "HEVC_Main_AutoLevel", ""] {
            XCTAssertThrowsError(try VideoProfileLevel(parsing: bad, codec: .h264), bad)
        }
        XCTAssertEqual(AVVideoProfileLevelH264HighAutoLevel, VideoProfileLevel.h264(.high, level: .auto).profileString)
    }

    /// Apple's profile string encodes as High (level 4.1 when asked), checked with ffprobe;
    /// an unknown profile fails at startWriting with the accepted values, and x264 prints nothing.
    func testProfilesReachTheStreamAndBadOnesFailQuietly() async throws {
        let dir = try makeTemporaryDirectory()
        let url = dir.appendingPathComponent("high41.mp4")
        var settings = VideoSettings(width: 160, height: 120, preset: "veryfast")  // ultrafast uses no High tools: x264 then writes Constrained Baseline
        settings.profileLevel = .h264(.high, level: .level(4, 1))
        try await writeClip(to: url, settings: settings, frames: 3)
        let (stream, _) = try FF.probe(url.path)
        XCTAssertEqual(stream["profile"] as? String, "High")
        XCTAssertEqual(int(stream["level"]), 41)

        let input = try AssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoWidthKey: 160, AVVideoHeightKey: 120,
            AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel],
        ])
        let apple = try AssetWriter(outputURL: dir.appendingPathComponent("apple.mp4"))
        try apple.add(input)
        try apple.startWriting()
        apple.cancelWriting()

        var bad = VideoSettings(width: 160, height: 120, preset: "ultrafast")
        bad.profile = "ultra"
        let writer = try AssetWriter(outputURL: dir.appendingPathComponent("bad.mp4"))
        try writer.add(AssetWriterInput(outputSettings: bad))
        let stderrFile = dir.appendingPathComponent("stderr.txt").path
        let saved = dup(2)
        let fd = open(stderrFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        dup2(fd, 2)
        var thrown: Error?
        do { try writer.startWriting() } catch { thrown = error }
        dup2(saved, 2)
        close(fd)
        close(saved)
        let message = (thrown as? SwiftRecordError)?.message ?? "no error"
        XCTAssertTrue(message.contains("'ultra'") && message.contains("baseline, main, high"), message)
        let printed = try String(contentsOfFile: stderrFile, encoding: .utf8)
        XCTAssertFalse(printed.contains("x264 [error]"), printed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.mp4").path))
    }
}
