import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class AssetWriterTests: FileTestCase {
    func settings720(_ codec: VideoCodec = .h264) -> VideoSettings {
        VideoSettings(codec: codec, width: 1280, height: 720, rateControl: .averageBitRate(2_000_000),
                      maxKeyFrameInterval: 60, expectedSourceFrameRate: Rational(30), preset: "veryfast")
    }

    /// 150 frames, 1280x720, 30 fps, 2 Mbit/s, in each container; checked by ffprobe.
    /// H.264 gets low-amplitude noise; VP9's real-time mode gets the synthetic scene
    /// (noise is beyond what VP9 can squeeze into 2 Mbit/s, with the ffmpeg CLI too).
    func check720(_ fileType: FileType, codec: VideoCodec = .h264, codecName: String) async throws {
        let url = dir.appendingPathComponent("clip.\(fileType)")
        try await writeClip(to: url, settings: settings720(codec), frames: 150, scene: codec == .vp9)
        let (s, f) = try FF.probe(url.path)
        XCTAssertEqual(s["codec_name"] as? String, codecName)
        XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p")
        XCTAssertEqual(int(s["width"]), 1280)
        XCTAssertEqual(int(s["height"]), 720)
        XCTAssertEqual(int(s["nb_read_frames"]), 150)
        XCTAssertEqual(s["r_frame_rate"] as? String, "30/1")
        let duration = try XCTUnwrap(double(f["duration"]))
        XCTAssertEqual(duration, 5.0, accuracy: 0.001, "\(fileType) duration")
        let size = try XCTUnwrap(double(f["size"]))
        let bitrate = size * 8 / duration
        XCTAssertEqual(bitrate, 2_000_000, accuracy: 500_000, "\(fileType) average bit rate")
        if codec != .vp9 {
            XCTAssertEqual(s["color_space"] as? String, "bt709")
            XCTAssertEqual(s["color_range"] as? String, "tv")
            XCTAssertEqual(s["color_primaries"] as? String, "bt709")
        }
    }

    func testH264InMP4() async throws { try await check720(.mp4, codecName: "h264") }
    func testH264InMOV() async throws { try await check720(.mov, codecName: "h264") }
    func testH264InMKV() async throws { try await check720(.mkv, codecName: "h264") }
    func testVP9InWebM() async throws { try await check720(.webm, codec: .vp9, codecName: "vp9") }

    /// A queued picture is let go once encoded: a long offline write (the producer always
    /// ahead, so the writer's queue never empties) reuses the same pool storage throughout.
    func testLongOfflineWriteAllocatesNoNewStorageInSteadyState() async throws {
        let url = dir.appendingPathComponent("long.mkv")
        let settings = VideoSettings(codec: .h264, width: 320, height: 240, rateControl: .averageBitRate(500_000),
                                     expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: settings)
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        for i in 0..<900 {
            let b = try pool.makePixelBuffer()
            fill(b, value: UInt8(truncatingIfNeeded: i))
            try await adaptor.append(b, withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        // Storage alive at once: the buffer being filled, the queued pictures, the one
        // being encoded. Anything more means a picture outlived its encoding.
        XCTAssertLessThanOrEqual(pool.storageAllocationCount, input.queueDepth + 2,
                                 "pool storage allocated over 900 frames")
        let (s, _) = try FF.probe(url.path)
        XCTAssertEqual(int(s["nb_read_frames"]), 900)
    }

    func testHEVCAndAV1AreDecodable() async throws {
        for (codec, name, ext) in [(VideoCodec.hevc, "hevc", "mp4"), (.av1, "av1", "mkv")] {
            let url = dir.appendingPathComponent("small-\(name).\(ext)")
            let s = VideoSettings(codec: codec, width: 320, height: 240, rateControl: .averageBitRate(500_000),
                                  expectedSourceFrameRate: Rational(30), preset: "ultrafast")
            try await writeClip(to: url, settings: s, frames: 30)
            let (stream, _) = try FF.probe(url.path)
            XCTAssertEqual(stream["codec_name"] as? String, name)
            XCTAssertEqual(int(stream["nb_read_frames"]), 30, name)
            let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", url.path, "-f", "null", "-"])
            XCTAssertTrue(decode.succeeded, "\(name) decodes without error: \(decode.stderr)")
        }
    }

    func testNetworkOptimizedPutsMoovFirst() async throws {
        let s = VideoSettings(width: 320, height: 240, expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        let fast = dir.appendingPathComponent("fast.mp4")
        try await writeClip(to: fast, settings: s, frames: 20, optimize: true)
        let boxes = try topLevelBoxes(fast)
        let moov = try XCTUnwrap(boxes.firstIndex(of: "moov")), mdat = try XCTUnwrap(boxes.firstIndex(of: "mdat"))
        XCTAssertLessThan(moov, mdat, "boxes: \(boxes)")

        let plain = dir.appendingPathComponent("plain.mp4")
        try await writeClip(to: plain, settings: s, frames: 20, optimize: false)
        let b2 = try topLevelBoxes(plain)
        XCTAssertGreaterThan(try XCTUnwrap(b2.firstIndex(of: "moov")), try XCTUnwrap(b2.firstIndex(of: "mdat")))
    }

    func testSingleThreadedOutputIsDeterministicAndMatchesFFmpegCLI() async throws {
        var s = VideoSettings(width: 640, height: 360, rateControl: .averageBitRate(1_000_000), maxKeyFrameInterval: 60,
                              expectedSourceFrameRate: Rational(30), preset: "veryfast", threads: 1)
        s.profile = nil
        let a = dir.appendingPathComponent("a.mp4"), b = dir.appendingPathComponent("b.mp4")
        try await writeClip(to: a, settings: s, frames: 45)
        try await writeClip(to: b, settings: s, frames: 45)
        XCTAssertEqual(try Data(contentsOf: a), try Data(contentsOf: b), "same frames, threads=1: byte-identical files")

        // The same raw frames through the ffmpeg command line.
        let raw = dir.appendingPathComponent("frames.yuv")
        _ = FileManager.default.createFile(atPath: raw.path, contents: nil)
        let handle = try FileHandle(forWritingTo: raw)
        for i in 0..<45 {
            let buf = try PixelBuffer(width: 640, height: 360, pixelFormat: .yuv420p)
            fill(buf, seed: UInt64(i + 1))
            buf.withReadAccess { planes in
                for p in planes {
                    for row in 0..<p.height {
                        handle.write(Data(bytes: p.baseAddress + row * p.bytesPerRow, count: p.rowLength))
                    }
                }
            }
        }
        try handle.close()
        let reference = dir.appendingPathComponent("ref.mp4")
        try FF.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-r", "30", "-i", raw.path,
                       "-c:v", "libx264", "-preset", "veryfast", "-b:v", "1M", "-g", "60", "-threads", "1",
                       "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
                       reference.path])
        let ours = try FF.framemd5(a.path, outputArgs: ["-map", "0:v", "-c", "copy"])
        let theirs = try FF.framemd5(reference.path, outputArgs: ["-map", "0:v", "-c", "copy"])
        XCTAssertEqual(ours.count, 45)
        XCTAssertEqual(FF.hashes(ours), FF.hashes(theirs), "H.264 packets equal ffmpeg -c:v libx264 -threads 1's")
    }

    func testSessionStartAndEndTrim() async throws {
        let url = dir.appendingPathComponent("session.mp4")
        let writer = AssetWriter(outputURL: url, fileType: .mp4)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 320, height: 240, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        XCTAssertNil(adaptor.pixelBufferPool, "nil before writing starts, as on Apple platforms")
        try writer.startWriting()
        try writer.startSession(atSourceTime: MediaTime(seconds: 10))
        let pool = try XCTUnwrap(adaptor.pixelBufferPool)
        // Frames stamped 9 s … 15 s (exclusive) at 30 fps: 180 frames, the first 30 before the session.
        for i in 270..<450 {
            let b = try pool.makePixelBuffer()
            fill(b, value: UInt8(i % 200))
            try await adaptor.append(b, withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
        }
        XCTAssertEqual(input.droppedSampleCount, 30)
        input.markAsFinished()
        try await writer.finishWriting()
        let (s, f) = try FF.probe(url.path)
        XCTAssertEqual(int(s["nb_read_frames"]), 150)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 5.0, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(double(s["start_time"])), 0, accuracy: 0.001)

        // endSession trims: frames at or after the end are not written, the last lasts until it.
        let trimmed = dir.appendingPathComponent("trimmed.mp4")
        let w2 = AssetWriter(outputURL: trimmed, fileType: .mp4)
        let in2 = AssetWriterInput(outputSettings: VideoSettings(width: 320, height: 240, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let ad2 = PixelBufferAdaptor(assetWriterInput: in2)
        try w2.add(in2)
        try w2.startWriting()
        try w2.startSession(atSourceTime: MediaTime(seconds: 10))
        try w2.endSession(atSourceTime: MediaTime(value: 25, timescale: 2)) // 12.5 s
        for i in 300..<450 {
            let b = try XCTUnwrap(ad2.pixelBufferPool).makePixelBuffer()
            fill(b, value: 100)
            try await ad2.append(b, withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
        }
        in2.markAsFinished()
        try await w2.finishWriting()
        let (s2, f2) = try FF.probe(trimmed.path)
        XCTAssertEqual(int(s2["nb_read_frames"]), 75)
        XCTAssertEqual(try XCTUnwrap(double(f2["duration"])), 2.5, accuracy: 0.001)
        XCTAssertEqual(in2.droppedSampleCount, 75)
    }

    func testVariableFrameRateKeepsTimes() async throws {
        // No expected frame rate: times keep microsecond precision and durations follow the gaps.
        let url = dir.appendingPathComponent("vfr.mkv")
        let writer = AssetWriter(outputURL: url, fileType: .mkv)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 160, height: 120, preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let times: [Int64] = [0, 40, 80, 200, 240, 500] // milliseconds
        for (i, t) in times.enumerated() {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(b, value: UInt8(20 + i * 30))
            try syncAppend(adaptor, b, MediaTime(value: t, timescale: 1000))
        }
        try writer.endSession(atSourceTime: MediaTime(value: 600, timescale: 1000))
        input.markAsFinished()
        try await writer.finishWriting()
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-of", "csv=p=0", url.path])
        let pts = r.stdout.split(separator: "\n").compactMap { Double($0) }.sorted()
        XCTAssertEqual(pts, [0, 0.04, 0.08, 0.2, 0.24, 0.5])
        let (_, f) = try FF.probe(url.path)
        XCTAssertEqual(try XCTUnwrap(double(f["duration"])), 0.6, accuracy: 0.002)
    }

    func testWritingToABufferTheEncoderHoldsDoesNotChangeWhatIsEncoded() async throws {
        // Lossless, so decoded samples can be compared exactly.
        let url = dir.appendingPathComponent("cow.mkv")
        let writer = AssetWriter(outputURL: url, fileType: .mkv)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 64, rateControl: .constantQuantizer(0),
                                                                   expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let buffer = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
        fill(buffer, value: 50)
        try syncAppend(adaptor, buffer, .zero)
        fill(buffer, value: 200) // the encoder may still hold frame 0: this must not reach it
        try syncAppend(adaptor, buffer, MediaTime(value: 1, timescale: 30))
        input.markAsFinished()
        try await writer.finishWriting()
        let out = dir.appendingPathComponent("out.yuv")
        try FF.ffmpeg(["-i", url.path, "-f", "rawvideo", "-pix_fmt", "yuv420p", out.path])
        let data = try Data(contentsOf: out)
        let frame = 64 * 64 * 3 / 2
        XCTAssertEqual(data.count, 2 * frame)
        XCTAssertEqual(Set(data.prefix(64 * 64)), [50])
        XCTAssertEqual(Set(data[frame..<(frame + 64 * 64)]), [200])
    }

    func testRotationIsWrittenAsDisplayMatrix() async throws {
        let url = dir.appendingPathComponent("rotated.mp4")
        let writer = AssetWriter(outputURL: url, fileType: .mp4)
        writer.metadata = AssetMetadata(title: "Rotated clip", creationDate: Date(timeIntervalSince1970: 1_700_000_000))
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 160, height: 120, expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        input.transform = .rotated90
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<5 {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(b, value: 90)
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream_side_data=rotation:format_tags=title,creation_time", "-of", "default=nw=1", url.path])
        XCTAssertTrue(r.stdout.contains("rotation=-90"), "clockwise 90, as an iPhone portrait clip: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("TAG:title=Rotated clip"), r.stdout)
        XCTAssertTrue(r.stdout.contains("TAG:creation_time=2023-11-14T22:13:20"), r.stdout)
    }

    func testBGRASourceIsConvertedWithBT709() async throws {
        let url = dir.appendingPathComponent("bgra.mp4")
        let writer = AssetWriter(outputURL: url, fileType: .mp4)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 320, height: 240, rateControl: .constantQuality(10),
                                                                   expectedSourceFrameRate: Rational(30), preset: "ultrafast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input,
                                         sourcePixelBufferAttributes: PixelBufferAttributes(width: 640, height: 480, pixelFormat: .bgra))
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<10 {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            XCTAssertEqual(b.pixelFormat, .bgra)
            b.withWriteAccess { planes in
                let p = planes[0]
                for row in 0..<p.height {
                    let line = (p.baseAddress + row * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<640 { line[x * 4] = 40; line[x * 4 + 1] = 160; line[x * 4 + 2] = 220; line[x * 4 + 3] = 255 }
                }
            }
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        let (s, _) = try FF.probe(url.path)
        XCTAssertEqual(int(s["width"]), 320)
        let (r, g, b) = try FF.rgb(url.path, x: 160, y: 120, at: 0.1)
        XCTAssertEqual(r, 220, accuracy: 6); XCTAssertEqual(g, 160, accuracy: 6); XCTAssertEqual(b, 40, accuracy: 6)
    }
}
