import Foundation
import SwiftRecord
import TestSupport
import XCTest

// ThumbnailTests: AssetImageGenerator, its pictures compared with what the ffmpeg command
// line decodes at the same times (`ffmpeg -ss T -i F -frames:v 1`, raw RGB), PSNR in the test.
//
// - testTenTimestampsAreTheFramesFFmpegDecodes: 10 times on frames of a 4 s H.264 MP4 with
//   B-frames: each picture ≥ 45 dB against ffmpeg's, actual time = the time asked; a time
//   inside a frame's interval gives that frame; a neighbouring frame is < 45 dB (the check
//   tells frames apart).
// - testTimesInOrderDecodeOnAsASeekWould: 40 times in order, 0.1 s apart (found by decoding
//   on from the last picture, no seek inside a key-frame interval), give the same pictures
//   and times as each asked of a fresh generator (a seek each); going back still seeks.
// - testToleranceMayReturnTheKeyFrame: 1.4 s with 1 s of tolerance before gives the key frame
//   at 1.0 s (its time reported, its picture ffmpeg's at 1.0 s); without tolerance 1.4 s.
// - testMaximumSizeKeepsTheAspect: 100x100 → 100x75, 0x60 → 80x60, larger → the track's size;
//   the scaled picture ≥ 30 dB against ffmpeg's scale of the same frame.
// - testAppliesPreferredTrackTransform: an MP4 remuxed with a 90° display matrix (ffprobe
//   reports it): off, the stored 320x240 picture; on, 240x320 equal to ffmpeg's autorotated one.
// - testEncodedImagesAreValidPNGAndJPEG: PNG and JPEG bytes that ffprobe reads as png/mjpeg
//   of the right size; the PNG decodes to exactly the pixel buffer.
// - testTaggedColorMatrixIsUsed: a BT.709-tagged H.264 file (and a full-range one): the RGB
//   picture ≥ 45 dB against ffmpeg's, which converts with the tagged matrix and range
//   (24.7 dB when the reader converted every file as BT.601 limited range).
// - testErrorsAreClear: a time past the end, an audio-only file, a file of noise: each
//   throws a message naming the file and what is wrong.
final class ThumbnailTests: FileTestCase {
    static let size = (width: 320, height: 240)

    /// A 4 s MP4: H.264 with B-frames, 320x240 at 30 fps, a key frame every second.
    func makeSource(_ name: String = "src.mp4") throws -> String {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "4", "-c:v", "libx264", "-threads", "1",
                       "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", p])
        return p
    }

    /// ffmpeg's picture at `seconds` as raw RGB (`extra` output options, e.g. a scale).
    func ffmpegPicture(_ file: String, at seconds: Double, extra: [String] = []) throws -> Data {
        let out = path("ref-\(UUID().uuidString).rgb")
        try FF.ffmpeg(["-ss", String(format: "%.6f", seconds), "-i", file, "-frames:v", "1", "-threads", "1"] + extra
                      + ["-f", "rawvideo", "-pix_fmt", "rgb24", out])
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// The picture's RGB bytes, rows packed.
    func bytes(_ image: PixelBuffer) -> Data {
        XCTAssertEqual(image.pixelFormat, .rgb24)
        return image.withReadAccess { planes in
            var data = Data()
            let p = planes[0]
            for y in 0..<image.height {
                data.append(p.baseAddress.assumingMemoryBound(to: UInt8.self) + y * p.bytesPerRow, count: image.width * 3)
            }
            return data
        }
    }

    /// Peak signal-to-noise ratio of two 8-bit pictures, in dB (infinity when equal).
    func psnr(_ a: Data, _ b: Data) -> Double {
        XCTAssertEqual(a.count, b.count, "pictures of different sizes")
        guard a.count == b.count, !a.isEmpty else { return 0 }
        var sum = 0.0
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for i in 0..<a.count {
                    let d = Double(x[i]) - Double(y[i])
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(a.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    func testTenTimestampsAreTheFramesFFmpegDecodes() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        XCTAssertEqual(generator.track.naturalSize, VideoSize(width: 320, height: 240))
        for frame in [0, 7, 15, 29, 31, 45, 59, 77, 100, 119] {
            let time = MediaTime(value: Int64(frame), timescale: 30)
            let (image, actual) = try generator.image(at: time)
            XCTAssertEqual(actual, time, "frame \(frame)")
            XCTAssertEqual(image.width, 320)
            XCTAssertEqual(image.height, 240)
            let quality = psnr(bytes(image), try ffmpegPicture(source, at: time.seconds))
            XCTAssertGreaterThanOrEqual(quality, 45, "frame \(frame) at \(time.seconds) s: \(quality) dB")
        }
        // Inside frame 50's interval (50/30 to 51/30): frame 50.
        let (inside, actual) = try generator.image(at: MediaTime(value: 101, timescale: 60))
        XCTAssertEqual(actual, MediaTime(value: 50, timescale: 30))
        XCTAssertGreaterThanOrEqual(psnr(bytes(inside), try ffmpegPicture(source, at: 50.0 / 30)), 45)
        // The next frame differs enough for the check to tell.
        XCTAssertLessThan(psnr(bytes(inside), try ffmpegPicture(source, at: 51.0 / 30)), 45)
    }

    func testTimesInOrderDecodeOnAsASeekWould() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        let times = (0..<40).map { MediaTime(value: Int64($0), timescale: 10) } + [MediaTime(value: 5, timescale: 10)]
        for time in times {
            let (image, actual) = try generator.image(at: time)
            let fresh = try AssetImageGenerator(asset: URL(fileURLWithPath: source)).image(at: time)
            XCTAssertEqual(actual, fresh.actualTime, "at \(time.seconds) s")
            XCTAssertEqual(bytes(image), bytes(fresh.image), "at \(time.seconds) s")
        }
        XCTAssertGreaterThanOrEqual(psnr(bytes(try generator.image(at: MediaTime(value: 37, timescale: 10)).image),
                                         try ffmpegPicture(source, at: 3.7)), 45)
    }

    func testToleranceMayReturnTheKeyFrame() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        let time = MediaTime(value: 14, timescale: 10)
        XCTAssertEqual(try generator.image(at: time).actualTime, time)
        generator.requestedTimeToleranceBefore = MediaTime(seconds: 1)
        let (image, actual) = try generator.image(at: time)
        XCTAssertEqual(actual, MediaTime(seconds: 1), "the key frame at 1 s, where decoding starts")
        XCTAssertGreaterThanOrEqual(psnr(bytes(image), try ffmpegPicture(source, at: 1)), 45)
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = MediaTime(seconds: 1)
        XCTAssertEqual(try generator.image(at: time).actualTime, time, "the frame at 1.4 s is the first inside [1.4 s, 2.4 s]")
    }

    func testMaximumSizeKeepsTheAspect() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        let time = MediaTime(value: 45, timescale: 30)
        generator.maximumSize = VideoSize(width: 100, height: 100)
        let small = try generator.image(at: time).image
        XCTAssertEqual([small.width, small.height], [100, 75])
        XCTAssertGreaterThanOrEqual(psnr(bytes(small), try ffmpegPicture(source, at: time.seconds, extra: ["-vf", "scale=100:75"])), 30)
        generator.maximumSize = VideoSize(width: 0, height: 60)
        let short = try generator.image(at: time).image
        XCTAssertEqual([short.width, short.height], [80, 60])
        generator.maximumSize = VideoSize(width: 1000, height: 1000)
        let whole = try generator.image(at: time).image
        XCTAssertEqual([whole.width, whole.height], [320, 240], "never scaled up")
    }

    /// `source` remuxed (packets untouched) into an MP4 whose video track has `transform`.
    func remux(_ source: String, to output: String, transform: VideoTransform) async throws {
        let reader = try AssetReader(path: source)
        let track = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let out = AssetReaderTrackOutput(track: track, outputSettings: nil)
        try reader.add(out)
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: output), fileType: .mp4)
        let input = try AssetWriterInput(mediaType: .video, outputSettings: nil, sourceFormatHint: track.formatDescription)
        input.transform = transform
        try writer.add(input)
        try writer.startWriting()
        try reader.startReading()
        try writer.startSession(atSourceTime: .zero)
        while let sample = try out.copyNextSampleBuffer() { try await input.append(sample) }
        input.markAsFinished()
        try await writer.finishWriting()
    }

    func testAppliesPreferredTrackTransform() async throws {
        let source = try makeSource()
        let rotated = path("rotated.mp4")
        try await remux(source, to: rotated, transform: .rotated90)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0", rotated])
        XCTAssertTrue(probe.stdout.contains("90"), "no display matrix: \(probe.stdout)")
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: rotated))
        let time = MediaTime(value: 20, timescale: 30)
        let stored = try generator.image(at: time).image
        XCTAssertEqual([stored.width, stored.height], [320, 240])
        XCTAssertGreaterThanOrEqual(psnr(bytes(stored), try ffmpegPicture(source, at: time.seconds)), 45)
        generator.appliesPreferredTrackTransform = true
        XCTAssertEqual(generator.imageSize, VideoSize(width: 240, height: 320))
        let shown = try generator.image(at: time).image
        XCTAssertEqual([shown.width, shown.height], [240, 320])
        // ffmpeg turns pictures as the display matrix says (autorotate, its default).
        let reference = try ffmpegPicture(rotated, at: time.seconds)
        XCTAssertGreaterThanOrEqual(psnr(bytes(shown), reference), 45)
        generator.maximumSize = VideoSize(width: 120, height: 0)
        let small = try generator.image(at: time).image
        XCTAssertEqual([small.width, small.height], [120, 160], "maximumSize applies to the turned picture")
    }

    func testEncodedImagesAreValidPNGAndJPEG() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        let time = MediaTime(seconds: 2)
        for (format, codec) in [(ImageFileFormat.png, "png"), (.jpeg, "mjpeg")] {
            let file = path("still.\(format.rawValue)")
            try generator.encodedImage(at: time, format: format).write(to: URL(fileURLWithPath: file))
            let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", file])
            XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(codec),320,240")
        }
        // PNG is lossless: decoded by ffmpeg, exactly the pixel buffer.
        let decoded = path("png.rgb")
        try FF.ffmpeg(["-i", path("still.png"), "-f", "rawvideo", "-pix_fmt", "rgb24", decoded])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: decoded)), bytes(try generator.image(at: time).image))
        // JPEG: close to the picture.
        let jpeg = path("jpeg.rgb")
        try FF.ffmpeg(["-i", path("still.jpeg"), "-f", "rawvideo", "-pix_fmt", "rgb24", jpeg])
        XCTAssertGreaterThanOrEqual(psnr(try Data(contentsOf: URL(fileURLWithPath: jpeg)), bytes(try generator.image(at: time).image)), 25)
    }

    func testTaggedColorMatrixIsUsed() throws {
        for (name, tags) in [("bt709.mp4", ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]),
                             ("full.mp4", ["-color_range", "pc"])] {
            let file = path(name)
            try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "1", "-c:v", "libx264", "-threads", "1",
                           "-pix_fmt", "yuv420p"] + tags + [file])
            let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: file))
            let time = MediaTime(value: 15, timescale: 30)
            let quality = psnr(bytes(try generator.image(at: time).image), try ffmpegPicture(file, at: time.seconds))
            XCTAssertGreaterThanOrEqual(quality, 45, "\(name): \(quality) dB")
        }
    }

    func testErrorsAreClear() throws {
        let source = try makeSource()
        let generator = try AssetImageGenerator(asset: URL(fileURLWithPath: source))
        XCTAssertThrowsError(try generator.image(at: MediaTime(seconds: 9))) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("past the end") && message.contains("src.mp4"), message)
        }
        XCTAssertThrowsError(try generator.image(at: MediaTime(seconds: -1))) { error in
            XCTAssertTrue("\(error)".contains("expected 0 or later"), "\(error)")
        }
        let audio = path("tone.m4a")
        try FF.ffmpeg(["-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1", "-c:a", "aac", audio])
        XCTAssertThrowsError(try AssetImageGenerator(asset: URL(fileURLWithPath: audio))) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("no video track") && message.contains("tone.m4a") && message.contains("aac"), message)
        }
        let noise = path("noise.mp4")
        var seed: UInt32 = 4_242
        try Data((0..<65_536).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }).write(to: URL(fileURLWithPath: noise))
        XCTAssertThrowsError(try AssetImageGenerator(asset: URL(fileURLWithPath: noise))) { error in
            XCTAssertTrue("\(error)".contains("noise.mp4"), "\(error)")
        }
    }
}
