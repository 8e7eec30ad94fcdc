import CoreMedia
import Foundation
import ScreenCaptureKit
import SwiftRecord
import SwiftRecordX11
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// ScreenCaptureKit's names over a private Xvfb (1280x720): shareable content, filters,
/// a stream's pictures with their frame info, screenshots.
final class ScreenCaptureKitTests: XvfbTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    /// Collects a stream's pictures with their attachments.
    final class Collector: SCStreamOutput {
        struct Seen { let status: SCFrameStatus; let dirty: [CGRect]; let content: CGRect; let displayTime: UInt64; let picture: PixelBuffer?; let width: Int }
        let seen = Locked<[Seen]>([])
        func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
            guard let array = CMSampleBufferGetSampleAttachmentsArray(sampleBuffer, createIfNecessary: false) as? [[SCStreamFrameInfo: Any]],
                  let attachments = array.first,
                  let raw = attachments[SCStreamFrameInfo.status] as? Int, let status = SCFrameStatus(rawValue: raw),
                  let dirty = attachments[.dirtyRects] as? [CGRect], let content = attachments[.contentRect] as? CGRect,
                  let time = attachments[.displayTime] as? UInt64, let picture = CMSampleBufferGetImageBuffer(sampleBuffer) else { return }
            // Only the complete pictures are kept (a stream has a few buffers, as on the Mac).
            seen.withLock { $0.append(Seen(status: status, dirty: dirty, content: content, displayTime: time, picture: status == .complete ? picture : nil, width: picture.width)) }
        }
    }

    private func content() async throws -> SCShareableContent {
        try await SCShareableContent.content(xDisplay: server.display)
    }

    /// The first display and a window of this process titled `title` (kept open by the caller).
    private func displayAndWindow(titled title: String) async throws -> (SCDisplay, SCWindow, X11AppWindow) {
        let window = try X11AppWindow(display: server.display, title: title, x: 40, y: 40, width: 200, height: 100)
        try window.draw(step: 1)
        let content = try await content()
        let display = try XCTUnwrap(content.displays.first)
        return (display, try XCTUnwrap(content.windows.first { $0.title == title }), window)
    }

    func testShareableContentListsTheMonitorAndTheTestWindow() async throws {
        let window = try X11AppWindow(display: server.display, title: "sck-test ✓", x: 20, y: 40, width: 160, height: 90)
        try window.draw(step: 1)
        let content = try await content()
        let monitors = try X11Source.monitors(display: server.display)
        XCTAssertEqual(content.displays.map(\.name), monitors.map(\.name))
        XCTAssertEqual(content.displays.first?.width, 1280)
        XCTAssertEqual(content.displays.first?.height, 720)
        let found = try XCTUnwrap(content.windows.first { $0.title == "sck-test ✓" }, "windows: \(content.windows.map(\.title))")
        XCTAssertEqual(found.frame, CGRect(x: 20, y: 40, width: 160, height: 90))
        XCTAssertEqual(found.owningApplication?.processID, getpid())
        XCTAssertTrue(found.isOnScreen)
        let me = try XCTUnwrap(content.applications.first { $0.processID == getpid() })
        XCTAssertFalse(me.applicationName.isEmpty)
    }

    func testExcludingAWindowOnX11ThrowsNamingWhatItCanDo() async throws {
        let (display, w, window) = try await displayAndWindow(titled: "excluded")
        defer { withExtendedLifetime(window) {} }
        XCTAssertThrowsError(try SCContentFilter(display: display, excludingWindows: [w])) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("X11 backend cannot exclude windows"), text)
            XCTAssertTrue(text.contains("desktopIndependentWindow"), text)
        }
        XCTAssertNoThrow(try SCContentFilter(display: display, excludingWindows: []))
    }

    func testScreenshotHasThePaintedColours() async throws {
        let painter = try XPainter(server)
        let quadrants: [(x: Int, y: Int, rgb: UInt32)] = [(0, 0, 0xFF0000), (640, 0, 0x00FF00), (0, 360, 0x0000FF), (640, 360, 0xFFFF00)]
        for q in quadrants { painter.fill(x: q.x, y: q.y, width: 640, height: 360, rgb: q.rgb) }
        let displays = try await content().displays
        let display = try XCTUnwrap(displays.first)
        let configuration = SCStreamConfiguration()
        configuration.showsCursor = false
        let image = try await SCScreenshotManager.captureImage(contentFilter: try SCContentFilter(display: display, excludingWindows: []),
                                                               configuration: configuration)
        XCTAssertEqual(image.width, 1280)
        XCTAssertEqual(image.pixelFormat, .bgra)
        for q in quadrants {
            XCTAssertEqual(bgra(image, q.x + 320, q.y + 180), q.rgb)
            XCTAssertEqual(bgra(image, q.x + 1, q.y + 1), q.rgb)
        }
        // A source rectangle, scaled to half its size.
        configuration.sourceRect = CGRect(x: 600, y: 320, width: 80, height: 80)
        (configuration.width, configuration.height) = (40, 40)
        let part = try await SCScreenshotManager.captureImage(contentFilter: try SCContentFilter(display: display, excludingWindows: []),
                                                              configuration: configuration)
        XCTAssertEqual([part.width, part.height], [40, 40])
        XCTAssertEqual(bgra(part, 5, 5), 0xFF0000)
        XCTAssertEqual(bgra(part, 35, 35), 0xFFFF00)
    }

    /// Damage-driven pictures: the painted rectangle is in the dirty rectangles (grown to even
    /// sides at most), a still screen gives idle frames.
    func testStreamDirtyRectsFollowThePaintAndAStillScreenIsIdle() async throws {
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 1280, height: 720, rgb: 0x202020)
        let displays = try await content().displays
        let display = try XCTUnwrap(displays.first)
        let configuration = SCStreamConfiguration()
        configuration.showsCursor = false
        configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
        let stream = SCStream(filter: try SCContentFilter(display: display, excludingWindows: []), configuration: configuration, delegate: nil)
        let collector = Collector()
        try stream.addStreamOutput(collector, type: .screen, sampleHandlerQueue: nil)
        try await stream.startCapture()
        try await Task.sleep(for: .milliseconds(300))
        let painted = CGRect(x: 200, y: 100, width: 64, height: 48)
        let before = collector.seen.withLock { $0.count }
        painter.fill(x: 200, y: 100, width: 64, height: 48, rgb: 0xE0E0E0)
        try await Task.sleep(for: .milliseconds(500))
        try await stream.stopCapture()
        let seen = collector.seen.withLock { $0 }
        XCTAssertEqual(seen.first?.status, .complete, "the first picture is whole")
        XCTAssertEqual(seen.first?.dirty, [CGRect(x: 0, y: 0, width: 1280, height: 720)])
        XCTAssertEqual(seen.first?.content, CGRect(x: 0, y: 0, width: 1280, height: 720))
        XCTAssertTrue(zip(seen, seen.dropFirst()).allSatisfy { $0.displayTime < $1.displayTime }, "display times rise")
        let after = seen.dropFirst(before)
        let changed = try XCTUnwrap(after.first { $0.status == .complete }, "a complete picture after the paint: \(after.map(\.status))")
        let union = changed.dirty.reduce(CGRect.null) { $0.union($1) }
        XCTAssertTrue(union.contains(painted), "\(changed.dirty) covers \(painted)")
        XCTAssertTrue(union.insetBy(dx: -2, dy: -2).width <= painted.width + 8, "\(changed.dirty) hugs \(painted)")
        let pixel = bgra(try XCTUnwrap(changed.picture), 232, 124)
        for shift in [0, 8, 16] { XCTAssertEqual(Double(pixel >> shift & 0xFF), 0xE0, accuracy: 24, "0x\(String(pixel, radix: 16)) after YUV") }
        XCTAssertGreaterThan(after.filter { $0.status == .idle }.count, 3, "a still screen is idle: \(after.map(\.status))")
        XCTAssertTrue(after.filter { $0.status == .idle }.allSatisfy { $0.dirty.isEmpty })
        XCTAssertEqual(stream.droppedFrameCount, 0)
        // Stopped: nothing more arrives.
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(collector.seen.withLock { $0.count }, seen.count)
    }

    final class RecordingEvents: SCRecordingOutputDelegate {
        let events = Locked<[String]>([])
        func recordingOutputDidStartRecording(_ recordingOutput: SCRecordingOutput) { events.withLock { $0.append("started") } }
        func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) { events.withLock { $0.append("failed: \(error)") } }
        func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) { events.withLock { $0.append("finished") } }
    }

    /// A second of a moving window through SCStream + SCRecordingOutput: an HEVC MP4 (the
    /// configured codec and container) that ffprobe reads, at the display's size, lasting
    /// about the recording.
    func testRecordingOutputWritesAPlayableFileWithTheConfiguredCodec() async throws {
        let painter = try XPainter(server)
        painter.fill(x: 0, y: 0, width: 1280, height: 720, rgb: 0x103050)
        let window = painter.window(x: 0, y: 100, width: 200, height: 150, rgb: 0xF0C020)
        let displays = try await content().displays
        let display = try XCTUnwrap(displays.first)
        let configuration = SCStreamConfiguration()
        configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
        let stream = SCStream(filter: try SCContentFilter(display: display, excludingWindows: []), configuration: configuration, delegate: nil)
        let recordingConfiguration = SCRecordingOutputConfiguration()
        let out = path("sck.mp4")
        recordingConfiguration.outputURL = URL(fileURLWithPath: out)
        recordingConfiguration.outputFileType = .mp4
        recordingConfiguration.videoCodecType = .hevc
        let events = RecordingEvents()
        let recording = SCRecordingOutput(configuration: recordingConfiguration, delegate: events)
        try stream.addRecordingOutput(recording)
        try await stream.startCapture()
        for step in 0..<20 {
            painter.move(window, x: 40 * step, y: 100)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await stream.stopCapture()
        XCTAssertEqual(events.events.withLock { $0 }, ["started", "finished"])
        let probe = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                                             "stream=codec_name,width,height,nb_read_frames:format=format_name,duration", "-of", "default=nw=1", out])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let fields = Dictionary(probe.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
            let kv = line.split(separator: "=", maxSplits: 1).map(String.init)
            return kv.count == 2 ? (kv[0], kv[1]) : nil
        }, uniquingKeysWith: { a, _ in a })
        print("ScreenCaptureKitTests: \(fields), \(recording.skippedFrameCount) skipped, duration \(recording.recordedDuration.seconds) s")
        XCTAssertEqual(fields["codec_name"], "hevc")
        XCTAssertEqual(fields["width"], "1280")
        XCTAssertEqual(fields["height"], "720")
        XCTAssertTrue(fields["format_name"]?.contains("mp4") == true, "\(fields)")
        XCTAssertGreaterThanOrEqual(Int(fields["nb_read_frames"] ?? "") ?? 0, 10, "a picture per move at least: \(fields)")
        let duration = try XCTUnwrap(Double(fields["duration"] ?? ""))
        XCTAssertEqual(duration, 1.0, accuracy: 0.5)
        XCTAssertGreaterThan(recording.recordedFileSize, 1000)
    }

    /// `frames()` over X11 with a consumer taking 150 ms a picture at 30 fps: the grabs keep
    /// the rate (the source's own counter runs on), the older pictures are dropped and counted.
    func testX11FramesWithASlowConsumerNeverHoldTheGrab() async throws {
        let source = try X11Source(configuration: X11Source.Configuration(display: server.display, showsCursor: false))
        let frames = source.frames(frameRate: Rational(30)!, bufferingNewest: 2)
        let start = MonotonicClock.nanoseconds()
        var indices: [Int] = []
        for try await frame in frames {
            indices.append(frame.index)
            try await Task.sleep(for: .milliseconds(150))
            if indices.count == 8 { break }
        }
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        print("ScreenCaptureKitTests: X11 \(indices) in \(seconds) s, \(frames.droppedCount) dropped")
        XCTAssertEqual(indices, indices.sorted())
        XCTAssertGreaterThan(frames.droppedCount, 8)
        // About 30 grabs a second went on behind the consumer's 7 a second (half, for a loaded machine).
        XCTAssertGreaterThan(Double(indices.last ?? 0), seconds * 15)
    }

    /// The backend follows the session, as the command line's default source does: Wayland
    /// for `WAYLAND_DISPLAY` alone or with `XDG_SESSION_TYPE=wayland` (Xwayland's screen
    /// holds only X11 programs), X11 for `DISPLAY`; neither named throws.
    func testDisplayServerFollowsTheSession() throws {
        XCTAssertEqual(try SCShareableContent.displayServer(environment: ["WAYLAND_DISPLAY": "wayland-0"]), .wayland)
        XCTAssertEqual(try SCShareableContent.displayServer(environment: ["DISPLAY": ":5", "WAYLAND_DISPLAY": "wayland-0"]), .x11)
        XCTAssertEqual(try SCShareableContent.displayServer(environment: ["DISPLAY": ":5", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"]), .wayland)
        XCTAssertEqual(try SCShareableContent.displayServer(environment: ["DISPLAY": ":5"]), .x11)
        XCTAssertThrowsError(try SCShareableContent.displayServer(environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("$WAYLAND_DISPLAY"), "\(error)")
        }
    }

    /// What X11 cannot do throws at once, naming the X11 backend and what it can do; leaving
    /// out an application is honoured when none of its windows would show.
    func testFiltersX11CannotHonourThrowNamingWhatItCan() async throws {
        let (display, w, window) = try await displayAndWindow(titled: "filters")
        defer { withExtendedLifetime(window) {} }
        func refused(_ make: @autoclosure () throws -> SCContentFilter, _ what: String) {
            XCTAssertThrowsError(try make()) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains("the X11 backend cannot \(what)"), text)
                XCTAssertTrue(text.contains("SCContentFilter(display:excludingWindows: [])") && text.contains("desktopIndependentWindow"), text)
            }
        }
        let me = try XCTUnwrap(w.owningApplication)
        let mine = try await content().windows.filter { $0.owningApplication == me && $0.isOnScreen }
        refused(try SCContentFilter(display: display, including: [w]), "capture only chosen windows")
        refused(try SCContentFilter(display: display, includingApplications: [me], exceptingWindows: []), "capture only chosen applications")
        refused(try SCContentFilter(display: display, excludingApplications: [me], exceptingWindows: []), "leave out the windows of")
        // Every window of the application excepted: nothing is left out, the display whole.
        let whole = try SCContentFilter(display: display, excludingApplications: [me], exceptingWindows: mine)
        XCTAssertEqual(whole.contentRect, CGRect(x: 0, y: 0, width: 1280, height: 720))
        XCTAssertEqual(try SCContentFilter(display: display, excludingApplications: [], exceptingWindows: []).contentRect, whole.contentRect)
    }

    /// `updateConfiguration` and `updateContentFilter` while capturing: the pictures take the
    /// new size, then the window (at that size).
    func testUpdatesTakeEffectWhileCapturing() async throws {
        let (display, w, window) = try await displayAndWindow(titled: "update")
        defer { withExtendedLifetime(window) {} }
        let configuration = SCStreamConfiguration()
        (configuration.width, configuration.height) = (640, 360)
        let stream = SCStream(filter: try SCContentFilter(display: display, excludingWindows: []), configuration: configuration, delegate: nil)
        let collector = Collector()
        try stream.addStreamOutput(collector, type: .screen, sampleHandlerQueue: nil)
        try await stream.startCapture()
        try await Task.sleep(for: .milliseconds(200))
        let smaller = SCStreamConfiguration()
        (smaller.width, smaller.height) = (320, 180)
        try await stream.updateConfiguration(smaller)
        try await Task.sleep(for: .milliseconds(200))
        let afterSize = collector.seen.withLock { $0.count }
        try await stream.updateContentFilter(SCContentFilter(desktopIndependentWindow: w))
        try await Task.sleep(for: .milliseconds(200))
        try await stream.stopCapture()
        let widths = collector.seen.withLock { $0.map(\.width) }
        XCTAssertEqual(widths.first, 640)
        XCTAssertTrue(widths.prefix(afterSize).contains(320), "\(widths)")
        XCTAssertEqual(widths.last, 320, "the window at the configured size: \(widths)")
        XCTAssertEqual(widths, widths.sorted(by: >), "sizes change only at the updates: \(widths)")
    }

    /// The BGRA pixel at (x, y) as 0xRRGGBB.
    private func bgra(_ buffer: PixelBuffer, _ x: Int, _ y: Int) -> UInt32 {
        buffer.withReadAccess { planes in
            let p = planes[0].baseAddress.assumingMemoryBound(to: UInt8.self) + y * planes[0].bytesPerRow + 4 * x
            return UInt32(p[2]) << 16 | UInt32(p[1]) << 8 | UInt32(p[0])
        }
    }
}
