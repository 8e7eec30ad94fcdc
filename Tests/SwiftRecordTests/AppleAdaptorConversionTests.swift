import AVFoundation
import Foundation
import TestSupport
import XCTest

/// Apple's adaptor converts: ReplayKit hands 420f buffers to code that declared BGRA. Here
/// one BGRA-declared adaptor takes 420v, 420f and BGRA buffers of the same pictures, and
/// ffmpeg's psnr filter compares the decoded movie with the pictures.
final class AppleAdaptorConversionTests: XCTestCase {
    static let width = 320, height = 240, framesPerKind = 10

    /// Picture `k`: smooth gradients that move, as BGRA bytes.
    static func picture(_ k: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(40 + (x + 3 * k) * 150 / (width + 90))          // blue
                bytes[i + 1] = UInt8(30 + (y + 2 * k) * 180 / (height + 60))     // green
                bytes[i + 2] = UInt8(200 - (x + y) * 150 / (width + height))     // red
            }
        }
        return bytes
    }

    /// A Core Video buffer of `format` holding `bytes` (tightly packed, plane after plane).
    static func buffer(_ format: OSType, _ bytes: [UInt8]) throws -> CVPixelBuffer {
        var out: CVPixelBuffer?
        XCTAssertEqual(CVPixelBufferCreate(kCFAllocatorDefault, width, height, format, nil, &out), kCVReturnSuccess)
        let pixelBuffer = try XCTUnwrap(out)
        XCTAssertEqual(CVPixelBufferGetPixelFormatType(pixelBuffer), format)
        XCTAssertEqual(CVPixelBufferLockBaseAddress(pixelBuffer, []), kCVReturnSuccess)
        let planes = max(1, CVPixelBufferGetPlaneCount(pixelBuffer))
        var offset = 0
        for plane in 0..<planes {
            let base = try XCTUnwrap(CVPixelBufferGetBaseAddressOfPlane(pixelBuffer, plane))
            let stride = CVPixelBufferGetBytesPerRowOfPlane(pixelBuffer, plane)
            let rowBytes = format == kCVPixelFormatType_32BGRA ? width * 4 : width
            let rows = plane == 0 ? height : height / 2
            for row in 0..<rows {
                bytes.withUnsafeBufferPointer { src in
                    (base + row * stride).copyMemory(from: src.baseAddress! + offset, byteCount: rowBytes)
                }
                offset += rowBytes
            }
        }
        XCTAssertEqual(CVPixelBufferUnlockBaseAddress(pixelBuffer, []), kCVReturnSuccess)
        return pixelBuffer
    }

    func testBGRADeclaredAdaptorConverts420v420fAndBGRA() async throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed")
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let w = Self.width, h = Self.height, n = Self.framesPerKind
        let size = "\(w)x\(h)"
        // The pictures, and ffmpeg's own NV12 of them in BT.709 video range and full range.
        let pictures = (0..<3 * n).map(Self.picture)
        let reference = dir.appendingPathComponent("pictures.bgra")
        try Data(pictures.joined()).write(to: reference)
        for (name, range) in [("420v", "tv"), ("420f", "pc")] {
            try FF.ffmpeg(["-f", "rawvideo", "-pix_fmt", "bgra", "-s", size, "-i", reference.path,
                           "-vf", "scale=out_color_matrix=bt709:out_range=\(range)", "-pix_fmt", "nv12", "-f", "rawvideo",
                           dir.appendingPathComponent("\(name).nv12").path])
        }
        let nv12Size = w * h * 3 / 2
        let videoRange = try [UInt8](Data(contentsOf: dir.appendingPathComponent("420v.nv12")))
        let fullRange = try [UInt8](Data(contentsOf: dir.appendingPathComponent("420f.nv12")))

        let url = dir.appendingPathComponent("converted.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        var settings = VideoSettings(width: w, height: h, expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        settings.encoderOptions = ["qp": "0"]   // lossless: what is measured is the conversion
        let input = AVAssetWriterInput(assetWriterInput: AssetWriterInput(outputSettings: settings))
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
            kCVPixelBufferWidthKey as String: w,
            kCVPixelBufferHeightKey as String: h,
        ])
        XCTAssertTrue(writer.canAdd(input))
        writer.add(input)
        XCTAssertTrue(writer.startWriting())
        writer.startSession(atSourceTime: kCMTimeZero)
        XCTAssertEqual(adaptor.pixelBufferPool.map(CVPixelBufferPoolFormat), kCVPixelFormatType_32BGRA)
        for k in 0..<3 * n {
            let pixelBuffer: CVPixelBuffer = switch k / n {
            case 0: try Self.buffer(kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, Array(videoRange[k * nv12Size..<(k + 1) * nv12Size]))
            case 1: try Self.buffer(kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, Array(fullRange[k * nv12Size..<(k + 1) * nv12Size]))
            default: try Self.buffer(kCVPixelFormatType_32BGRA, pictures[k])
            }
            XCTAssertTrue(adaptor.append(pixelBuffer, withPresentationTime: CMTimeMake(value: Int64(k), timescale: 30)), "frame \(k)")
        }
        input.markAsFinished()
        await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed, "\(String(describing: writer.error))")

        // ffmpeg compares in YUV: the decoded movie against its own BT.709 conversion of the pictures.
        let stats = dir.appendingPathComponent("psnr.log")
        try FF.ffmpeg(["-i", url.path, "-f", "rawvideo", "-pix_fmt", "bgra", "-s", size, "-r", "30", "-i", reference.path,
                       "-lavfi", "[0:v]format=yuv420p[a];[1:v]scale=out_color_matrix=bt709:out_range=tv,format=yuv420p[b];[a][b]psnr=stats_file=\(stats.path)",
                       "-f", "null", "-"])
        let lines = try String(contentsOf: stats, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 3 * n, "every picture decoded")
        var lowest = [Double](repeating: .infinity, count: 3)
        for (k, line) in lines.enumerated() {
            let field = line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.map { String($0.dropFirst(9)) } ?? ""
            let psnr = field == "inf" ? Double.infinity : Double(field) ?? 0
            XCTAssertGreaterThanOrEqual(psnr, 40, "frame \(k) (\(["420v", "420f", "BGRA"][k / n])): \(line)")
            lowest[min(k / n, 2)] = min(lowest[min(k / n, 2)], psnr)
        }
        print("lowest PSNR: 420v \(lowest[0]) dB, 420f \(lowest[1]) dB, BGRA \(lowest[2]) dB")
    }
}

/// The four-character code of a pool's buffers.
private func CVPixelBufferPoolFormat(_ pool: CVPixelBufferPool) -> OSType {
    var buffer: CVPixelBuffer?
    guard CVPixelBufferPoolCreatePixelBuffer(nil, pool, &buffer) == kCVReturnSuccess, let buffer else { return 0 }
    return CVPixelBufferGetPixelFormatType(buffer)
}
