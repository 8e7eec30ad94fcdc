import CoreMedia
import Foundation
import ScreenCaptureKit
import SwiftRecord
import TestSupport
import XCTest

/// `SCStreamConfiguration`'s picture settings over a private Xvfb, read back from a stream's
/// pictures: `scalesToFit = false` (the content at its own size, top left, the rest black),
/// `sourceRect`, `showsCursor`, and `queueDepth` behind a slow output (drops counted, the
/// grabs going on).
final class ScreenCaptureKitConfigurationTests: XvfbTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    /// Keeps a stream's last picture with its content rectangle (holding no more, as the
    /// stream's buffers are few); sleeps `delay` in each.
    final class Pictures: SCStreamOutput {
        let last = Locked<(picture: PixelBuffer, content: CGRect)?>(nil)
        let calls = Locked(0)
        let delay: Double
        init(delay: Double = 0) { self.delay = delay }
        func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
            calls.withLock { $0 += 1 }
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            guard let info = (CMSampleBufferGetSampleAttachmentsArray(sampleBuffer, createIfNecessary: false) as? [[SCStreamFrameInfo: Any]])?.first,
                  let content = info[.contentRect] as? CGRect, let picture = CMSampleBufferGetImageBuffer(sampleBuffer) else { return }
            last.withLock { $0 = (picture, content) }
        }
    }

    private func display() async throws -> SCContentFilter {
        let content = try await SCShareableContent.content(xDisplay: server.display)
        let display = try XCTUnwrap(content.displays.first)
        return try SCContentFilter(display: display, excludingWindows: [])
    }

    /// Runs a stream for `seconds` with `configure`d settings; its output and the stream.
    private func run(_ seconds: Double, delay: Double = 0, _ configure: (SCStreamConfiguration) -> Void) async throws -> (Pictures, SCStream) {
        let configuration = SCStreamConfiguration()
        configuration.showsCursor = false
        configure(configuration)
        let stream = SCStream(filter: try await display(), configuration: configuration, delegate: nil)
        let output = Pictures(delay: delay)
        try stream.addStreamOutput(output, type: .screen, sampleHandlerQueue: nil)
        try await stream.startCapture()
        try await Task.sleep(for: .seconds(seconds))
        try await stream.stopCapture()
        return (output, stream)
    }

    /// A 160x120 source rectangle, red on its left half and blue on its right, into 320x240
    /// pictures: unscaled at the top left with black around it, or scaled to fill them.
    func testScalesToFitFalseKeepsTheSourceSizeAtTheTopLeft() async throws {
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 1280, height: 720, rgb: 0x00FF00)
        painter.fill(x: 100, y: 100, width: 80, height: 120, rgb: 0xFF0000)
        painter.fill(x: 180, y: 100, width: 80, height: 120, rgb: 0x0000FF)
        for scales in [false, true] {
            let (output, _) = try await run(0.3) { c in
                c.sourceRect = CGRect(x: 100, y: 100, width: 160, height: 120)
                (c.width, c.height, c.scalesToFit) = (320, 240, scales)
            }
            let (picture, content) = try XCTUnwrap(output.last.withLock { $0 })
            XCTAssertEqual([picture.width, picture.height], [320, 240])
            if scales {
                XCTAssertEqual(content, CGRect(x: 0, y: 0, width: 320, height: 240))
                XCTAssertColour(bgra(picture, 150, 120), 0xFF0000, "scaled: the red half fills the left")
                XCTAssertColour(bgra(picture, 300, 230), 0x0000FF)
            } else {
                XCTAssertEqual(content, CGRect(x: 0, y: 0, width: 160, height: 120), "the content at its own size")
                XCTAssertColour(bgra(picture, 10, 10), 0xFF0000)
                XCTAssertColour(bgra(picture, 150, 110), 0x0000FF, "the blue half ends at x 160, not 320")
                XCTAssertColour(bgra(picture, 200, 60), 0x000000, "black right of the content")
                XCTAssertColour(bgra(picture, 60, 200), 0x000000, "black below the content")
            }
        }
    }

    /// The pointer over a grey square: drawn into the pictures with `showsCursor`, not without.
    func testShowsCursorDrawsThePointer() async throws {
        let painter = try XPainter(server)
        painter.fill(x: 400, y: 400, width: 64, height: 64, rgb: 0x808080)
        painter.movePointer(x: 420, y: 420)
        var changed: [Bool: Int] = [:]
        for shows in [true, false] {
            let (output, _) = try await run(0.3) { c in
                c.sourceRect = CGRect(x: 400, y: 400, width: 64, height: 64)
                c.showsCursor = shows
            }
            let picture = try XCTUnwrap(output.last.withLock { $0?.picture })
            changed[shows] = (0..<64).flatMap { y in (0..<64).map { (x: $0, y: y) } }.filter { bgra(picture, $0.x, $0.y) != 0x808080 }.count
        }
        XCTAssertGreaterThan(changed[true] ?? 0, 20, "the cursor shows around the pointer: \(changed)")
        XCTAssertEqual(changed[false], 0, "\(changed)")
    }

    /// An output taking 150 ms a picture at 30 per second with `queueDepth` 3: it gets what it
    /// can, the rest is dropped and counted, and the grabs go on at the rate meanwhile.
    func testQueueDepthDropsBehindASlowOutput() async throws {
        let seconds = 1.5
        let (output, stream) = try await run(seconds, delay: 0.15) { c in
            c.minimumFrameInterval = CMTime(value: 1, timescale: 30)
            c.queueDepth = 3
            (c.width, c.height) = (320, 180)
        }
        let calls = output.calls.withLock { $0 }
        print("ScreenCaptureKitConfigurationTests: \(calls) pictures taken by the slow output, \(stream.droppedFrameCount) dropped")
        // What it could take in the time, and the pictures already handed to its queue at the stop.
        XCTAssertLessThanOrEqual(calls, Int(seconds / 0.15) + 3 + 4 + 1)
        XCTAssertGreaterThan(stream.droppedFrameCount, 5)
        // About 45 grabs in 1.5 s; half of them for a loaded machine.
        XCTAssertGreaterThan(calls + stream.droppedFrameCount, Int(seconds * 15))
    }

    /// `rgb` within 3 in each channel (the conversion to BGRA rounds).
    private func XCTAssertColour(_ rgb: UInt32, _ expected: UInt32, _ message: String = "", line: UInt = #line) {
        let channel = { (value: UInt32, shift: UInt32) -> Int in Int((value >> shift) & 0xFF) }
        let off = [UInt32(16), 8, 0].map { (shift: UInt32) -> Int in abs(channel(rgb, shift) - channel(expected, shift)) }.max() ?? 0
        XCTAssertLessThanOrEqual(off, 3, "0x\(String(rgb, radix: 16)) is not 0x\(String(expected, radix: 16)): \(message)", line: line)
    }

    /// The BGRA pixel at (x, y) as 0xRRGGBB.
    private func bgra(_ buffer: PixelBuffer, _ x: Int, _ y: Int) -> UInt32 {
        buffer.withReadAccess { planes in
            let p = planes[0].baseAddress.assumingMemoryBound(to: UInt8.self) + y * planes[0].bytesPerRow + 4 * x
            return UInt32(p[2]) << 16 | UInt32(p[1]) << 8 | UInt32(p[0])
        }
    }
}
