import Foundation
import SwiftRecord
import SwiftRecordScene
import TestSupport
import XCTest

final class CaptureTests: XCTestCase {
    func testRegistryKnowsSyntheticAndNamesTheChoicesForUnknown() throws {
        XCTAssertTrue(CaptureSourceRegistry.shared.names.contains("synthetic"))
        let s = try CaptureSourceRegistry.shared.makeSource(named: "synthetic", options: CaptureSourceOptions(size: VideoSize(width: 64, height: 48)))
        XCTAssertEqual(s.identifier, "synthetic")
        XCTAssertEqual(s.nativeSize, VideoSize(width: 64, height: 48))
        XCTAssertFalse(s.isLive)
        XCTAssertThrowsError(try CaptureSourceRegistry.shared.makeSource(named: "nope", options: CaptureSourceOptions())) { e in
            XCTAssertTrue("\(e)".contains("synthetic"), "\(e)")
        }
        let registry = CaptureSourceRegistry()
        registry.register(name: "fake", summary: "test") { try SyntheticSource(options: $0) }
        XCTAssertEqual(registry.names, ["fake"])
    }

    func testRegistryMakesTheRawFileSourceFromItsTypedConfiguration() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(getpid())-3x3.yuv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 128, count: 2 * 17)))
        var options = CaptureSourceOptions(size: VideoSize(width: 3, height: 3))
        XCTAssertThrowsError(try CaptureSourceRegistry.shared.makeSource(named: "yuv", options: options)) { e in
            XCTAssertTrue("\(e)".contains("needs an input file"), "\(e)")
        }
        options.configure(RawVideoFileSource.Configuration(path: path))
        let source = try CaptureSourceRegistry.shared.makeSource(named: "yuv", options: options)
        XCTAssertEqual(source.nativeSize, VideoSize(width: 4, height: 4), "padded to even sides")
        XCTAssertEqual(source.pixelFormat, .yuv420p)
        XCTAssertNil(source.captureDescription)
        XCTAssertEqual(source.notices, [])
    }

    func testSyntheticFramesAreDeterministicAndStampedWithIndexOverRate() throws {
        let a = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 320, height: 240), frameRate: Rational(30000, 1001)!))
        let b = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 320, height: 240)))
        let pool = try PixelBufferPool(width: 320, height: 240, pixelFormat: .yuv420p, maximumBufferCount: 4)
        for i in 0..<3 {
            let fa = try XCTUnwrap(try a.nextFrame(from: pool)), fb = try XCTUnwrap(try b.nextFrame(from: pool))
            XCTAssertEqual(fa.captureTime, MediaTime(value: Int64(i) * 1001, timescale: 30000))
            XCTAssertEqual(fa.index, i)
            let bytes: (PixelBuffer) -> [UInt8] = { buf in
                buf.withReadAccess { planes in
                    planes.flatMap { p in (0..<p.height).flatMap { r in Array(UnsafeBufferPointer(start: (p.baseAddress + r * p.bytesPerRow).assumingMemoryBound(to: UInt8.self), count: p.rowLength)) } }
                }
            }
            XCTAssertEqual(bytes(fa.pixelBuffer), bytes(fb.pixelBuffer), "frame \(i) is the same picture every time")
            fa.pixelBuffer.withReadAccess { planes in
                XCTAssertEqual(FrameIndexBand.decode(luma: planes[0].baseAddress.assumingMemoryBound(to: UInt8.self),
                                                     bytesPerRow: planes[0].bytesPerRow, width: 320, height: 240), i)
            }
        }
    }

    /// SwiftRecordScene on raw planes with rows wider than the picture (as a broadcast sender's
    /// shared buffers) draws what SyntheticScene draws into a pixel buffer, byte for byte.
    func testSceneOnRawPlanesWithWideRowsIsTheSyntheticScene() throws {
        let (width, height, pad) = (320, 240, 72)
        let scene = try SyntheticScene(width: width, height: height)
        let drawing = try XCTUnwrap(SceneDrawing(width: width, height: height))
        XCTAssertNil(SceneDrawing(width: 321, height: 240), "an odd width is refused")
        let buffer = try PixelBuffer(width: width, height: height, pixelFormat: .yuv420p)
        let rows = [(width + pad, height), (width / 2 + pad, height / 2), (width / 2 + pad, height / 2)]
        var (rawY, rawU, rawV) = ([UInt8](repeating: 1, count: rows[0].0 * rows[0].1), [UInt8](repeating: 1, count: rows[1].0 * rows[1].1),
                                  [UInt8](repeating: 1, count: rows[2].0 * rows[2].1))
        for frame in [0, 1, 29, 30, 31, 1000] {
            try scene.render(frame: frame, into: buffer)
            rawY.withUnsafeMutableBufferPointer { y in
                rawU.withUnsafeMutableBufferPointer { u in
                    rawV.withUnsafeMutableBufferPointer { v in
                        drawing.draw(frame: frame, into: ScenePlanes(y: y.baseAddress!, u: u.baseAddress!, v: v.baseAddress!,
                                                                     yBytesPerRow: rows[0].0, uBytesPerRow: rows[1].0, vBytesPerRow: rows[2].0),
                                     flash: SyntheticScene.flashes(frame: frame))
                    }
                }
            }
            let raw = [rawY, rawU, rawV]
            buffer.withReadAccess { planes in
                for (p, plane) in planes.enumerated() {
                    for r in 0..<plane.height {
                        let drawn = Array(UnsafeBufferPointer(start: (plane.baseAddress + r * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self), count: plane.rowLength))
                        XCTAssertEqual(drawn, Array(raw[p][(r * rows[p].0)..<(r * rows[p].0 + plane.rowLength)]), "frame \(frame), plane \(p), row \(r)")
                        XCTAssertEqual(Set(raw[p][(r * rows[p].0 + plane.rowLength)..<((r + 1) * rows[p].0)]), [1], "nothing drawn past the row, frame \(frame)")
                    }
                }
            }
            rawY.withUnsafeBufferPointer { y in
                XCTAssertEqual(FrameIndexBand.decode(luma: y.baseAddress!, bytesPerRow: rows[0].0, width: width, height: height), frame)
            }
        }
    }

    func testLiveSyntheticUsesTheInjectedClock() throws {
        struct FakeClock: HostClock { func now() -> MediaTime { MediaTime(value: 42, timescale: 1000) } }
        let s = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 64, height: 64), realtime: true, clock: FakeClock()))
        XCTAssertTrue(s.isLive)
        let pool = try PixelBufferPool(width: 64, height: 64, pixelFormat: .yuv420p, maximumBufferCount: 1)
        XCTAssertEqual(try s.nextFrame(from: pool)?.captureTime, MediaTime(value: 42, timescale: 1000))
    }

    func testBandRejectsNoise() throws {
        let b = try PixelBuffer(width: 640, height: 360, pixelFormat: .yuv420p)
        fill(b, seed: 7)
        b.withReadAccess { planes in
            XCTAssertNil(FrameIndexBand.decode(luma: planes[0].baseAddress.assumingMemoryBound(to: UInt8.self), bytesPerRow: planes[0].bytesPerRow, width: 640, height: 360))
        }
    }

    /// The band survives lossy H.264 at 500 kbit/s, 640x360: every index reads back, in order.
    func testFrameIndexBandSurvives500kbitH264() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("band.mp4")
        let source = try SyntheticSource(options: CaptureSourceOptions(size: VideoSize(width: 640, height: 360)))
        let writer = try AssetWriter(outputURL: url)
        let input = AssetWriterInput(outputSettings: VideoSettings(width: 640, height: 360, rateControl: .averageBitRate(500_000),
                                                                   expectedSourceFrameRate: Rational(30), preset: "veryfast"))
        let adaptor = PixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let session = CaptureSession(source: source, writer: writer, adaptor: adaptor, frameRate: Rational(30)!, limit: CaptureLimit(frames: 150))
        let stats = try await session.run()
        XCTAssertEqual(stats.framesWritten, 150)
        try await writer.finishWriting()
        let (_, f) = try FF.probe(url.path)
        let bitrate = try XCTUnwrap(double(f["size"])) * 8 / 5
        XCTAssertEqual(bitrate, 500_000, accuracy: 150_000)
        let report = try FrameIndexBand.verify(path: url.path)
        XCTAssertEqual(report.indices.compactMap { $0 }, Array(0..<150), report.description)
        XCTAssertTrue(report.isClean)
    }
}
