import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// A quiet 440 Hz tone with a loud 2-ms click at each of `clicks` (sample positions), as
/// interleaved 16-bit buffers of `chunk` frames, stamped by sample count.
func toneBuffers(rate: Int = 48_000, layout: ChannelLayout = .stereo, seconds: Double, chunk: Int = 480,
                 clicks: Set<Int> = [], start: MediaTime = .zero) throws -> [AudioSampleBuffer] {
    let total = Int(seconds * Double(rate))
    let format = AudioFormat(sampleType: .s16, sampleRate: rate, channelLayout: layout)
    let clickLength = rate / 500
    let clickStarts = clicks.sorted()
    var buffers: [AudioSampleBuffer] = []
    var n = 0
    while n < total {
        let count = min(chunk, total - n)
        var samples = [Int16](repeating: 0, count: count * layout.channelCount)
        for i in 0..<count {
            let k = n + i
            var v = 0.1 * sin(2 * .pi * 440 * Double(k) / Double(rate))
            if let c = clickStarts.last(where: { $0 <= k }), k - c < clickLength { v = (k - c) % 8 < 4 ? 0.9 : -0.9 }
            for ch in 0..<layout.channelCount { samples[i * layout.channelCount + ch] = Int16(v * 32767) }
        }
        let time = start + MediaTime(value: Int64(n), timescale: Int32(rate))
        buffers.append(try AudioSampleBuffer(format: format, presentationTimeStamp: time, interleaved: samples))
        n += count
    }
    return buffers
}

final class AudioWriterTests: FileTestCase {

    private func writeAudio(_ name: String, settings: AudioSettings, buffers: [AudioSampleBuffer],
                            video: (frames: Int, fps: Int32)? = nil) async throws -> (URL, AssetWriterInput) {
        let url = dir.appendingPathComponent(name)
        let writer = try AssetWriter(outputURL: url)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: settings)
        try writer.add(audio)
        var adaptor: PixelBufferAdaptor?
        if video != nil {
            let v = AssetWriterInput(outputSettings: VideoSettings(codec: url.pathExtension == "webm" ? .vp9 : .h264, width: 160, height: 96,
                                                                   expectedSourceFrameRate: Rational(video!.fps), preset: "ultrafast"))
            adaptor = PixelBufferAdaptor(assetWriterInput: v)
            try writer.add(v)
        }
        writer.movieFragmentInterval = MediaTime(seconds: 1)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        var nextFrame = 0
        for b in buffers {
            // Video frames up to this buffer's time first: interleaved as a recorder would.
            if let adaptor, let video {
                while nextFrame < video.frames,
                      MediaTime(value: Int64(nextFrame), timescale: video.fps) <= b.presentationTimeStamp {
                    let pb = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
                    fill(pb, value: UInt8(truncatingIfNeeded: 16 + nextFrame))
                    try await adaptor.append(pb, withPresentationTime: MediaTime(value: Int64(nextFrame), timescale: video.fps))
                    nextFrame += 1
                }
            }
            try await audio.append(b)
        }
        while let adaptor, let video, nextFrame < video.frames {
            let pb = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(pb, value: UInt8(truncatingIfNeeded: 16 + nextFrame))
            try await adaptor.append(pb, withPresentationTime: MediaTime(value: Int64(nextFrame), timescale: video.fps))
            nextFrame += 1
        }
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed, "\(String(describing: writer.error))")
        return (url, audio)
    }

    func testAACInMP4IsLCTaggedMp4aAndLastsExactlyAsLongAsTheTone() async throws {
        let (url, input) = try await writeAudio("tone.mp4", settings: AudioSettings(),
                                                buffers: toneBuffers(rate: 44_100, seconds: 5, chunk: 441, clicks: [0]))
        let a = try AudioCheck.probe(url.path)
        XCTAssertEqual(a["codec_name"] as? String, "aac")
        XCTAssertEqual(a["profile"] as? String, "LC")
        XCTAssertEqual(a["codec_tag_string"] as? String, "mp4a")
        XCTAssertEqual(int(a["sample_rate"]), 48_000)
        XCTAssertEqual(int(a["channels"]), 2)
        let duration = try XCTUnwrap(double(a["duration"]))
        XCTAssertEqual(duration, 5.0, accuracy: 1024.0 / 48_000, "ffprobe duration \(duration)")
        // The first sample is not cut: the click at sample 0 is decoded at the very start.
        let pcm = try AudioCheck.decode(url.path)
        let onsets = AudioCheck.clickOnsets(pcm, rate: 48_000)
        XCTAssertEqual(onsets.first ?? -1, 0, accuracy: 0.001, "click onsets \(onsets.prefix(3))")
        XCTAssertGreaterThan(AudioCheck.rms(pcm[24_000..<48_000]), 0.05, "the tone is there")
        XCTAssertEqual(input.audioSyncStatistics.silenceInsertions, 0)
        XCTAssertEqual(input.audioSyncStatistics.dropEvents, 0)
    }

    func testOpusInWebMMKVAndMP4() async throws {
        for ext in ["webm", "mkv", "mp4"] {
            let (url, _) = try await writeAudio("tone.\(ext)", settings: AudioSettings(codec: .opus, bitRate: 96_000),
                                                buffers: toneBuffers(seconds: 3, chunk: 1000, clicks: [0, 48_000]))
            let a = try AudioCheck.probe(url.path)
            XCTAssertEqual(a["codec_name"] as? String, "opus", ext)
            let pcm = try AudioCheck.decode(url.path)
            XCTAssertEqual(Double(pcm.count) / 48_000, 3.0, accuracy: 0.021, ext)
            let onsets = AudioCheck.clickOnsets(pcm, rate: 48_000)
            XCTAssertEqual(onsets.count, 2, "\(ext): \(onsets)")
            XCTAssertEqual(onsets.first ?? -1, 0, accuracy: 0.001, ext)
            XCTAssertEqual(onsets.last ?? -1, 1, accuracy: 0.001, ext)
        }
    }

    func testPlanarFloatMonoIsConvertedAndVideoAndAudioLastTheSame() async throws {
        // 30 frames a second for 4 s, and 4 s of planar float mono at 22.05 kHz.
        let rate = 22_050
        let format = AudioFormat(sampleType: .f32, isPlanar: true, sampleRate: rate, channelLayout: .mono)
        var buffers: [AudioSampleBuffer] = []
        for k in 0..<(4 * 10) {
            let samples = (0..<(rate / 10)).map { Float(0.2 * sin(2 * .pi * 300 * Double(k * rate / 10 + $0) / Double(rate))) }
            buffers.append(try AudioSampleBuffer(format: format, presentationTimeStamp: MediaTime(value: Int64(k * rate / 10), timescale: Int32(rate)),
                                                 planes: [samples.withUnsafeBytes { Array($0) }]))
        }
        let (url, _) = try await writeAudio("av.mp4", settings: AudioSettings(), buffers: buffers, video: (120, 30))
        let a = try AudioCheck.probe(url.path)
        let v = try FF.probe(url.path).stream
        let ad = try XCTUnwrap(double(a["duration"])), vd = try XCTUnwrap(double(v["duration"]))
        XCTAssertEqual(ad, vd, accuracy: 1024.0 / 48_000, "audio \(ad) s, video \(vd) s")
        XCTAssertEqual(int(a["channels"]), 2)
        let pcm = try AudioCheck.decode(url.path)
        XCTAssertGreaterThan(AudioCheck.rms(pcm[48_000..<96_000]), 0.1)
    }

    func testAGapBecomesSilenceAndAnOverlapIsDroppedKeepingLaterSamplesOnTheirTimes() async throws {
        // 1 s, then a buffer stamped 0.5 s late (a gap), then one stamped 0.2 s early (an overlap).
        var buffers = try toneBuffers(seconds: 1, chunk: 4800, clicks: [0])
        buffers += try toneBuffers(seconds: 1, chunk: 4800, clicks: [0], start: MediaTime(value: 1_500, timescale: 1000))
        // (The overlapping 0.2 s of the last buffer are what gets dropped: its click at 0 goes,
        // the one at 0.5 s lands on its time.)
        buffers += try toneBuffers(seconds: 1, chunk: 4800, clicks: [0, 24_000], start: MediaTime(value: 2_300, timescale: 1000))
        let (url, input) = try await writeAudio("gaps.mp4", settings: AudioSettings(), buffers: buffers)
        let onsets = AudioCheck.clickOnsets(try AudioCheck.decode(url.path), rate: 48_000)
        XCTAssertEqual(onsets.count, 3, "\(onsets)")
        XCTAssertEqual(onsets.first ?? 1, 0, accuracy: 0.001, "\(onsets)")
        XCTAssertEqual(onsets.dropFirst().first ?? 0, 1.5, accuracy: 0.002, "\(onsets)")
        XCTAssertEqual(onsets.last ?? 0, 2.8, accuracy: 0.002, "\(onsets)")
        let stats = input.audioSyncStatistics
        XCTAssertEqual(stats.silenceInsertions, 1, "\(stats)")
        XCTAssertEqual(stats.dropEvents, 1, "\(stats)")
    }

    func testAudioInputRefusesPicturesAndContainersThatCannotCarryTheCodec() throws {
        let writer = AssetWriter(outputURL: dir.appendingPathComponent("x.webm"), fileType: .webm)
        XCTAssertFalse(writer.canAdd(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .aac))))
        XCTAssertThrowsError(try writer.add(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .aac)))) {
            XCTAssertTrue("\($0)".contains("cannot carry aac"), "\($0)")
        }
        XCTAssertTrue(writer.canAdd(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .opus))))
        let w2 = AssetWriter(outputURL: dir.appendingPathComponent("y.mkv"), fileType: .mkv)
        let bad = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .opus, sampleRate: 44_100))
        try w2.add(bad)
        XCTAssertThrowsError(try w2.startWriting()) { XCTAssertTrue("\($0)".contains("Opus encodes at 48000"), "\($0)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("y.mkv").path))
    }
}
