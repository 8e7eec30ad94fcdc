// WriterPortingTests: every transform Apple code sets (AVAssetWriterInput.transform).
//
// - testAppleSpellingsMakeTheEightTransforms: CGAffineTransform's initialisers, C functions
//   and operations give the quarter turns and mirrors they do on Apple platforms.
// - testFlippedReplayKitWriterWritesAVerticalFlip: `transform = CGAffineTransformMakeScale(1, -1)`
//   into MP4: ffprobe shows the display matrix [1 0; 0 -1] (FFmpeg 5.1 reports its rotation as 0).
// - testEveryQuarterTurnAndMirrorRoundTripsThroughMP4: the eight, written and read back by ffprobe.
// - testMatroskaGetsThePicturesTurned: MKV has no display matrix; a flip, a mirror and a
//   quarter turn are applied to the pixels: framemd5 equals ffmpeg's vflip / hflip / transpose
//   of the untransformed file (lossless H.264).
// - testOtherTransformsAreRefused: 30°, a shear and a scale of 2 fail startWriting with a clear
//   error and no file; the quarter-turn VideoTransform spellings still work.
import Foundation
import SwiftRecord
import TestSupport
import XCTest

final class AffineTransformTests: FileTestCase {
    /// Writes 4 frames of noise (the same for the same size) with `transform`; lossless H.264.
    func write(_ url: URL, transform: CGAffineTransform, width: Int = 64, height: Int = 48) async throws {
        let writer = try AssetWriter(outputURL: url)
        let videoWriterInput = AssetWriterInput(outputSettings: VideoSettings(
            width: width, height: height, rateControl: .constantQuantizer(0), expectedSourceFrameRate: Rational(30),
            preset: "ultrafast", threads: 1))
        videoWriterInput.transform = transform
        let adaptor = PixelBufferAdaptor(assetWriterInput: videoWriterInput)
        try writer.add(videoWriterInput)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        for i in 0..<4 {
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            fill(b, seed: UInt64(i + 1))
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
        }
        videoWriterInput.markAsFinished()
        try await writer.finishWriting()
    }

    /// The display matrix ffprobe reads (9 numbers), or nil; and its rotation.
    func displayMatrix(_ url: URL) throws -> (matrix: [Int]?, rotation: Int?) {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_streams", "-of", "json", url.path])
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let stream = try XCTUnwrap((json["streams"] as? [[String: Any]])?.first)
        guard let side = (stream["side_data_list"] as? [[String: Any]])?.first(where: { ($0["side_data_type"] as? String) == "Display Matrix" }) else {
            return (nil, nil)
        }
        let text = try XCTUnwrap(side["displaymatrix"] as? String)
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { !$0.hasSuffix(":") }.compactMap { Int($0) }
        return (numbers, side["rotation"] as? Int)
    }

    func testAppleSpellingsMakeTheEightTransforms() {
        XCTAssertTrue(CGAffineTransform.identity.isIdentity)
        XCTAssertEqual(CGAffineTransformMakeRotation(.pi / 2).rotationDegrees, 90)
        XCTAssertEqual(CGAffineTransform(rotationAngle: -.pi / 2).rotationDegrees, 270)
        let flip = CGAffineTransform(scaleX: 1, y: -1)
        XCTAssertTrue(flip.isMirrored)
        XCTAssertEqual(flip.rotationDegrees, 180, "a vertical flip is a horizontal mirror turned upside down")
        XCTAssertEqual(CGAffineTransformMakeScale(-1, 1).rotationDegrees, 0)
        XCTAssertTrue(CGAffineTransformMakeScale(-1, 1).isMirrored)
        // Apple's composition order: scaledBy/rotated put the new step first.
        let t = CGAffineTransform.identity.rotated(by: .pi / 2).scaledBy(x: -1, y: 1)
        XCTAssertEqual(t, CGAffineTransformConcat(CGAffineTransformMakeScale(-1, 1), CGAffineTransformMakeRotation(.pi / 2)))
        XCTAssertTrue(t.isQuarterTurnOrMirror)
        XCTAssertTrue(CGAffineTransformMakeRotation(.pi / 2).concatenating(CGAffineTransformMakeRotation(.pi / 2).inverted()).isQuarterTurnOrMirror)
        XCTAssertTrue(CGAffineTransformMakeTranslation(100, 0).isQuarterTurnOrMirror, "translation is set aside")
        XCTAssertEqual(VideoTransform(AffineTransform(scaleByX: 1, byY: -1)), flip)
        XCTAssertFalse(CGAffineTransformMakeRotation(.pi / 6).isQuarterTurnOrMirror)
        XCTAssertFalse(CGAffineTransformMake(1, 0, 0.5, 1, 0, 0).isQuarterTurnOrMirror)
        XCTAssertFalse(CGAffineTransformScale(.identity, 2, 2).isQuarterTurnOrMirror)
        var seen = Set<[Double]>()
        for turns in 0..<4 {
            for mirrored in [false, true] {
                var m = CGAffineTransformMakeRotation(Double(turns) * .pi / 2)
                if mirrored { m = CGAffineTransformMakeScale(-1, 1).concatenating(m) }
                XCTAssertEqual(m.rotationDegrees, turns * 90)
                XCTAssertEqual(m.isMirrored, mirrored)
                seen.insert([m.a, m.b, m.c, m.d].map { $0.rounded() + 0 })
            }
        }
        XCTAssertEqual(seen.count, 8)
    }

    func testFlippedReplayKitWriterWritesAVerticalFlip() async throws {
        let url = dir.appendingPathComponent("flipped.mp4")
        try await write(url, transform: CGAffineTransformMakeScale(1, -1))
        let (matrix, rotation) = try displayMatrix(url)
        XCTAssertEqual(matrix, [65536, 0, 0, 0, -65536, 0, 0, 0, 1 << 30], "the tkhd matrix of a vertical flip")
        // FFmpeg 5.1's ffprobe reads the rotation part of a vertical flip as 0 (it has no flip
        // field): the flip is in the matrix, d = -65536.
        XCTAssertEqual(rotation, 0)
        XCTAssertEqual(try FF.probe(url.path).stream["nb_read_frames"] as? String, "4")
    }

    func testEveryQuarterTurnAndMirrorRoundTripsThroughMP4() async throws {
        for turns in 0..<4 {
            for mirrored in [false, true] {
                var t = CGAffineTransform(rotationAngle: Double(turns) * .pi / 2)
                if mirrored { t = t.scaledBy(x: -1, y: 1) }
                let url = dir.appendingPathComponent("t\(turns)\(mirrored).mp4")
                try await write(url, transform: t)
                let (matrix, _) = try displayMatrix(url)
                if turns == 0 && !mirrored {
                    XCTAssertNil(matrix, "identity writes no matrix")
                    continue
                }
                let m = try XCTUnwrap(matrix, "\(turns) \(mirrored)")
                let read = VideoTransform(a: Double(m[0]) / 65536, b: Double(m[1]) / 65536, c: Double(m[3]) / 65536,
                                          d: Double(m[4]) / 65536, tx: 0, ty: 0)
                XCTAssertEqual(read.rotationDegrees, turns * 90, "\(m)")
                XCTAssertEqual(read.isMirrored, mirrored, "\(m)")
                XCTAssertEqual([m[2], m[5], m[6], m[7], m[8]], [0, 0, 0, 0, 1 << 30])
            }
        }
    }

    func testMatroskaGetsThePicturesTurned() async throws {
        let plain = dir.appendingPathComponent("plain.mkv")
        try await write(plain, transform: .identity)
        let cases: [(String, CGAffineTransform, String)] = [
            ("vflip", CGAffineTransform(scaleX: 1, y: -1), "vflip"),
            ("hflip", CGAffineTransform(scaleX: -1, y: 1), "hflip"),
            ("clock", CGAffineTransform(rotationAngle: .pi / 2), "transpose=clock"),
            // Mirrored left to right, then a quarter turn clockwise: the anti-diagonal mirror.
            ("clock_flip", CGAffineTransform(rotationAngle: .pi / 2).scaledBy(x: -1, y: 1), "transpose=clock_flip"),
        ]
        for (name, transform, filter) in cases {
            let url = dir.appendingPathComponent("\(name).mkv")
            try await write(url, transform: transform)
            let ours = FF.hashes(try FF.framemd5(url.path, outputArgs: ["-pix_fmt", "yuv420p"]))
            let theirs = FF.hashes(try FF.framemd5(plain.path, outputArgs: ["-vf", filter, "-pix_fmt", "yuv420p"]))
            XCTAssertEqual(ours.count, 4, name)
            XCTAssertEqual(ours, theirs, "\(name): the pictures equal ffmpeg's \(filter) of the untransformed file")
            XCTAssertNil(try displayMatrix(url).matrix, name)
            let stream = try FF.probe(url.path).stream
            XCTAssertEqual(stream["width"] as? Int, name.contains("clock") ? 48 : 64, name)
        }
    }

    func testOtherTransformsAreRefused() async throws {
        let transforms: [(String, CGAffineTransform)] = [
            ("30", CGAffineTransform(rotationAngle: .pi / 6)),
            ("shear", CGAffineTransformMake(1, 0, 0.5, 1, 0, 0)),
            ("scale", CGAffineTransform(scaleX: 2, y: 2)),
        ]
        for (name, transform) in transforms {
            let url = dir.appendingPathComponent("\(name).mp4")
            let writer = AssetWriter(outputURL: url, fileType: .mp4)
            let input = AssetWriterInput(outputSettings: VideoSettings(width: 64, height: 48))
            input.transform = transform
            try writer.add(input)
            XCTAssertThrowsError(try writer.startWriting(), name) { error in
                let e = error as? SwiftRecordError
                XCTAssertEqual(e?.kind, .unsupported, name)
                XCTAssertTrue(e?.message.contains("quarter turns and mirrors") == true, "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: url.path), name)
        }
        // The quarter-turn spellings of before still work.
        XCTAssertEqual(VideoTransform(rotationDegrees: -90), .rotated270)
        XCTAssertNil(VideoTransform(rotationDegrees: 45))
        XCTAssertEqual(VideoTransform.rotated180.rotationDegrees, 180)
    }
}
