import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

/// The raw video / Y4M source, its header parser and the frame transform, without encoding.
final class RawVideoTests: FileTestCase {
    override class var checksWithFFmpeg: Bool { false }

    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = dir.appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// Asserts that `body` throws a SwiftRecordError whose text contains every fragment.
    func assertError(_ fragments: [String], file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("expected an error mentioning \(fragments)", file: file, line: line)
        } catch let e as SwiftRecordError {
            for f in fragments {
                XCTAssertTrue(e.description.contains(f), "'\(e.description)' should mention '\(f)'", file: file, line: line)
            }
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
    }

    /// Reads every frame of `source` and returns each plane's visible bytes, frame by frame.
    func readAll(_ source: RawVideoFileSource) throws -> [([[UInt8]], MediaTime)] {
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height,
                                       pixelFormat: source.pixelFormat, maximumBufferCount: 2)
        var frames: [([[UInt8]], MediaTime)] = []
        while let f = try source.nextFrame(from: pool) {
            let planes = f.pixelBuffer.withReadAccess { planes in
                planes.map { p in
                    (0..<p.height).flatMap { row in
                        Array(UnsafeRawBufferPointer(start: p.baseAddress + row * p.bytesPerRow, count: p.rowLength))
                    }
                }
            }
            frames.append((planes, f.captureTime))
        }
        return frames
    }

    // MARK: - Layouts

    func testFrameSizesRoundChromaUpForOddSizes() {
        XCTAssertEqual(RawPixelFormat.yuv420p.frameSize(width: 640, height: 360), 345_600)
        XCTAssertEqual(RawPixelFormat.yuv420p.frameSize(width: 3, height: 3), 9 + 4 + 4)
        XCTAssertEqual(RawPixelFormat.yv12.frameSize(width: 3, height: 3), 17)
        XCTAssertEqual(RawPixelFormat.nv12.frameSize(width: 3, height: 3), 9 + 2 * 2 * 2)
        XCTAssertEqual(RawPixelFormat.yuv422p.frameSize(width: 3, height: 3), 9 + 2 * 2 * 3)
        XCTAssertEqual(RawPixelFormat.yuyv422.frameSize(width: 3, height: 1), 8)
        XCTAssertEqual(RawPixelFormat.yuv420p10le.frameSize(width: 3, height: 3), 34)
        XCTAssertEqual(RawPixelFormat.gray.frameSize(width: 3, height: 3), 9)
        XCTAssertEqual(RawPixelFormat.rgb24.frameSize(width: 3, height: 3), 27)
        XCTAssertEqual(RawPixelFormat.bgra.frameSize(width: 3, height: 3), 36)
    }

    func testPixelFormatNamesAliasesAndUnknownNameListsSupported() throws {
        XCTAssertEqual(try RawPixelFormat.parse("I420"), .yuv420p)
        XCTAssertEqual(try RawPixelFormat.parse("yuy2"), .yuyv422)
        XCTAssertEqual(try RawPixelFormat.parse("UYVY"), .uyvy422)
        XCTAssertEqual(try RawPixelFormat.parse("gray8"), .gray)
        for name in ["yuv420p", "yv12", "nv12", "nv21", "yuv422p", "yuv444p", "yuyv422", "uyvy422", "gray", "bgra", "rgba", "rgb24", "yuv420p10le"] {
            XCTAssertNotNil(RawPixelFormat(name: name), name)
        }
        assertError(["unknown pixel format 'yuv9000'", "yuv420p (i420)", "nv12", "yuv420p10le"]) { _ = try RawPixelFormat.parse("yuv9000") }
    }

    // MARK: - Y4M header

    func parse(_ text: String) throws -> Y4MStreamHeader {
        try Y4MStreamHeader.parse(line: Array(text.utf8), length: text.utf8.count + 1)
    }

    func testY4MHeaderFields() throws {
        let h = try parse("YUV4MPEG2 W641 H361 F30000:1001 It A128:117 C422 XYSCSS=422 XCOLORRANGE=FULL Zfuture")
        XCTAssertEqual(h.width, 641)
        XCTAssertEqual(h.height, 361)
        XCTAssertEqual(h.frameRate, Rational(30000, 1001))
        XCTAssertEqual(h.pixelAspectRatio, Rational(128, 117))
        XCTAssertEqual(h.pixelFormat, .yuv422p)
        XCTAssertEqual(h.interlacing, .topFieldFirst)
        XCTAssertEqual(h.fullRange, true)
        XCTAssertEqual(h.ignoredFields, ["XYSCSS=422", "Zfuture"])

        let d = try parse("YUV4MPEG2 W64 H48")
        XCTAssertEqual(d.pixelFormat, .yuv420p, "C420jpeg is the default")
        XCTAssertEqual(d.colorSpace, "420jpeg")
        XCTAssertNil(d.frameRate)
        XCTAssertNil(d.pixelAspectRatio)
        XCTAssertEqual(d.interlacing, .unknown)

        for (c, f) in [("420jpeg", RawPixelFormat.yuv420p), ("420mpeg2", .yuv420p), ("420paldv", .yuv420p), ("420", .yuv420p),
                       ("444", .yuv444p), ("mono", .gray), ("420p10", .yuv420p10le), ("422p10", .yuv422p10le), ("444p10", .yuv444p10le)] {
            XCTAssertEqual(try parse("YUV4MPEG2 W2 H2 C\(c)").pixelFormat, f, c)
        }
        XCTAssertEqual(try parse("YUV4MPEG2 W2 H2 C420mpeg2").chromaSiting, .left)
        XCTAssertNil(try parse("YUV4MPEG2 W2 H2 A0:0").pixelAspectRatio, "A0:0 is unknown")
    }

    func testMalformedY4MHeaderNamesTheField() {
        assertError(["W (width)", "missing"]) { _ = try parse("YUV4MPEG2 H48 F25:1") }
        assertError(["H (height)", "'0'"]) { _ = try parse("YUV4MPEG2 W64 H0") }
        assertError(["W (width)", "'abc'"]) { _ = try parse("YUV4MPEG2 Wabc H48") }
        assertError(["F (frame rate)", "F30"]) { _ = try parse("YUV4MPEG2 W64 H48 F30") }
        assertError(["F (frame rate)"]) { _ = try parse("YUV4MPEG2 W64 H48 F30:0") }
        assertError(["A (pixel aspect)"]) { _ = try parse("YUV4MPEG2 W64 H48 A1:x") }
        assertError(["C (colour space)", "C411", "C420jpeg"]) { _ = try parse("YUV4MPEG2 W64 H48 C411") }
        assertError(["I (interlacing)", "Ix"]) { _ = try parse("YUV4MPEG2 W64 H48 Ix") }
        assertError(["does not start with 'YUV4MPEG2 '"]) { _ = try parse("YUV4MPEG W64 H48") }
    }

    // MARK: - Reading

    /// A raw file whose frame i has every sample of plane p equal to 10 * i + p.
    func rawFrames(_ format: RawPixelFormat, width: Int, height: Int, frames: Int) -> [UInt8] {
        let pf = format.pixelFormat
        var bytes: [UInt8] = []
        for i in 0..<frames {
            for p in 0..<pf.planeCount {
                bytes += [UInt8](repeating: UInt8(10 * i + p), count: pf.tightBytesPerRow(width: width, plane: p) * pf.planeHeight(height, plane: p))
            }
        }
        return bytes
    }

    func testRawFramesAreReadWithTimesFromTheRate() throws {
        let path = write("clip.yuv", rawFrames(.yuv420p, width: 64, height: 48, frames: 3))
        let source = try RawVideoFileSource(configuration: .init(path: path, size: VideoSize(width: 64, height: 48), frameRate: Rational(30000, 1001)))
        XCTAssertEqual(source.info.frameCount, 3)
        XCTAssertEqual(source.info.frameBytes, 64 * 48 * 3 / 2)
        let frames = try readAll(source)
        XCTAssertEqual(frames.count, 3)
        for (i, (planes, time)) in frames.enumerated() {
            XCTAssertEqual(time, MediaTime(value: Int64(1001 * i), timescale: 30000))
            for p in 0..<3 { XCTAssertEqual(Set(planes[p]), [UInt8(10 * i + p)], "frame \(i) plane \(p)") }
        }
    }

    func testYV12ChromaPlanesAreSwappedOnTheWayIn() throws {
        let path = write("clip.yv12", rawFrames(.yuv420p, width: 16, height: 8, frames: 1))
        let source = try RawVideoFileSource(configuration: .init(path: path, size: VideoSize(width: 16, height: 8), pixelFormat: .yv12))
        XCTAssertEqual(source.pixelFormat, .yuv420p)
        let planes = try readAll(source)[0].0
        XCTAssertEqual(Set(planes[0]), [0])
        XCTAssertEqual(Set(planes[1]), [2], "the file's second plane is V: it lands in plane 2")
        XCTAssertEqual(Set(planes[2]), [1])
    }

    func testOddSizeIsPaddedByRepeatingTheLastColumnAndRow() throws {
        // 3x3 I420: luma 0…8 row by row, chroma 2x2 each.
        let luma: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        let path = write("odd.yuv", luma + [20, 21, 22, 23] + [30, 31, 32, 33])
        let source = try RawVideoFileSource(configuration: .init(path: path, size: VideoSize(width: 3, height: 3), canvasSize: VideoSize(width: 4, height: 4)))
        XCTAssertEqual(source.nativeSize, VideoSize(width: 4, height: 4))
        let planes = try readAll(source)[0].0
        XCTAssertEqual(planes[0], [1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 7, 8, 9, 9])
        XCTAssertEqual(planes[1], [20, 21, 22, 23], "chroma of an odd picture already covers the even one")
        XCTAssertEqual(planes[2], [30, 31, 32, 33])
    }

    func testPackedOddWidthRepeatsTheLastLuma() throws {
        // 3x1 yuyv422: two pixel pairs, the last luma of the second pair is filler.
        let path = write("odd.yuyv", [10, 100, 11, 200, 12, 101, 99, 201])
        let source = try RawVideoFileSource(configuration: .init(path: path, size: VideoSize(width: 3, height: 1), pixelFormat: .yuyv422,
                                                           canvasSize: VideoSize(width: 4, height: 2)))
        let planes = try readAll(source)[0].0
        XCTAssertEqual(planes[0], [10, 100, 11, 200, 12, 101, 12, 201, 10, 100, 11, 200, 12, 101, 12, 201])
    }

    func testY4MIsRecognisedByItsHeaderAndFrameParametersAreSkipped() throws {
        let frame = [UInt8](repeating: 7, count: 4 * 2 * 3 / 2)
        var bytes = Array("YUV4MPEG2 W4 H2 F24:1 Ip A1:1 C420jpeg XCUSTOM=1\n".utf8)
        bytes += Array("FRAME\n".utf8) + frame
        bytes += Array("FRAME Ib XFOO=bar\n".utf8) + frame.map { $0 + 1 }
        let path = write("clip.raw", bytes)   // not called .y4m
        let source = try RawVideoFileSource(configuration: .init(path: path))
        XCTAssertEqual(source.info.container, .y4m)
        XCTAssertEqual(source.info.size, VideoSize(width: 4, height: 2))
        XCTAssertEqual(source.info.frameRate, Rational(24))
        XCTAssertEqual(source.info.frameCount, 2)
        let frames = try readAll(source)
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(Set(frames[1].0[0]), [8])
        XCTAssertEqual(frames[1].1, MediaTime(value: 1, timescale: 24))
    }

    func testInputChecksHappenBeforeReading() {
        let size = VideoSize(width: 640, height: 360)
        let partial = write("partial.yuv", [UInt8](repeating: 0, count: 345_600 * 2 + 1000))
        assertError(["692200 bytes", "345600 bytes", "2 whole frames", "1000 bytes are left over", "--allow-partial"]) {
            _ = try RawVideoFileSource(configuration: .init(path: partial, size: size))
        }
        XCTAssertNoThrow(try {
            let s = try RawVideoFileSource(configuration: .init(path: partial, size: size, allowPartial: true))
            XCTAssertEqual(s.info.frameCount, 2)
            XCTAssertEqual(s.info.trailingBytes, 1000)
        }())
        let small = write("small.yuv", [UInt8](repeating: 0, count: 1000))
        assertError(["1000 bytes", "less than one 640x360 yuv420p frame (345600 bytes)"]) {
            _ = try RawVideoFileSource(configuration: .init(path: small, size: size))
        }
        let empty = write("empty.yuv", [])
        assertError(["is empty"]) { _ = try RawVideoFileSource(configuration: .init(path: empty, size: size)) }
        assertError(["needs --size"]) { _ = try RawVideoFileSource(configuration: .init(path: small)) }
        assertError(["cannot open"]) { _ = try RawVideoFileSource(configuration: .init(path: dir.appendingPathComponent("missing.yuv").path, size: size)) }
        let notY4M = write("fake.y4m", Array("RIFF....".utf8))
        assertError(["not a YUV4MPEG2 stream"]) { _ = try RawVideoFileSource(configuration: .init(path: notY4M)) }
        let truncated = write("trunc.y4m", Array("YUV4MPEG2 W64 H48 F25".utf8))
        assertError(["YUV4MPEG2 header", "truncated"]) { _ = try RawVideoFileSource(configuration: .init(path: truncated)) }
        let shortFrame = write("short.y4m", Array("YUV4MPEG2 W4 H2\nFRAME\n".utf8) + [UInt8](repeating: 1, count: 12) + Array("FRAME\n".utf8) + [1, 2, 3])
        assertError(["ends inside a frame", "1 whole", "9 bytes left over"]) { _ = try RawVideoFileSource(configuration: .init(path: shortFrame)) }
        let garbage = write("garbage.y4m", Array("YUV4MPEG2 W4 H2\nFRAME\n".utf8) + [UInt8](repeating: 1, count: 12) + Array("JUNK!!".utf8) + [UInt8](repeating: 1, count: 12))
        assertError(["frame 2", "expected a FRAME line", "JUNK!!"]) { _ = try RawVideoFileSource(configuration: .init(path: garbage)) }
    }

    // MARK: - Transform

    func testTransformRotatesCropsAndPadsExactly() throws {
        // 4x2 gray: 1 2 3 4 / 5 6 7 8.
        let source = try PixelBuffer(width: 4, height: 2, pixelFormat: .gray)
        source.withWriteAccess { planes in
            for (i, v) in [1, 2, 3, 4, 5, 6, 7, 8].enumerated() {
                (planes[0].baseAddress + (i / 4) * planes[0].bytesPerRow).storeBytes(of: UInt8(v), toByteOffset: i % 4, as: UInt8.self)
            }
        }
        func run(crop: CropRegion? = nil, rotation: Int, size: VideoSize) throws -> [UInt8] {
            let t = try FrameTransform(sourceSize: VideoSize(width: 4, height: 2), sourceFormat: .gray, crop: crop, scaledSize: nil,
                                       rotation: rotation, destinationFormat: .gray, destinationSize: size, color: .bt709)
            let out = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .gray)
            try t.apply(source, into: out)
            return out.withReadAccess { p in (0..<p[0].height).flatMap { r in Array(UnsafeRawBufferPointer(start: p[0].baseAddress + r * p[0].bytesPerRow, count: p[0].rowLength)) } }
        }
        XCTAssertEqual(try run(rotation: 90, size: VideoSize(width: 2, height: 4)), [5, 1, 6, 2, 7, 3, 8, 4])
        XCTAssertEqual(try run(rotation: 180, size: VideoSize(width: 4, height: 2)), [8, 7, 6, 5, 4, 3, 2, 1])
        XCTAssertEqual(try run(rotation: 270, size: VideoSize(width: 2, height: 4)), [4, 8, 3, 7, 2, 6, 1, 5])
        XCTAssertEqual(try run(crop: CropRegion(x: 1, y: 0, width: 3, height: 1), rotation: 0, size: VideoSize(width: 4, height: 2)),
                       [2, 3, 4, 4, 2, 3, 4, 4], "cropped 3x1, padded to 4x2")
        XCTAssertThrowsError(try FrameTransform(sourceSize: VideoSize(width: 4, height: 2), sourceFormat: .yuv420p,
                                                crop: CropRegion(x: 1, y: 0, width: 2, height: 2), scaledSize: nil, rotation: 0,
                                                destinationFormat: .yuv420p, destinationSize: VideoSize(width: 2, height: 2), color: .bt709)) { e in
            XCTAssertTrue("\(e)".contains("even x"), "\(e)")
        }
    }
}
