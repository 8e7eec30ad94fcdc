// ScreenCaptureKit's names on Wayland (issue 42) against a private headless GNOME (640x360
// virtual monitor, PipeWire, the real desktop portal with the tests' backend), shared by the
// class's tests; the picker's refusals on a bus of their own.
//
// Catalogue:
// - testShareableContentListsMutterMonitorAndScreenshotMatchesGStreamer: WAYLAND_DISPLAY alone →
//   SCShareableContent.current lists Mutter's one monitor (its connector as gdbus reads
//   DisplayConfig, 640x360 at 0,0), no windows and the reason naming the Wayland backend and
//   the picker; the filters Mutter cannot honour throw naming the Wayland backend; a screenshot
//   of the display is 640x360 and agrees with GStreamer's pipewiresrc reading of a Mutter cast
//   of the same monitor (asked through the portal) pixel for pixel (within 6 per channel), and a
//   sourceRect's screenshot holds that part's pixels; a stream of the still desktop gives a
//   complete picture, then idle ones; `swift-record screenshot --monitor NAME`
//   writes a PNG with the same pixels (ffmpeg's decode).
// - testScreenshotCommandThroughThePortalAndWindowRefused: `swift-record screenshot` without
//   options goes through the portal (announced), a 640x360 PNG; --window on Wayland → exit 2
//   naming the Wayland backend and the chooser, nothing written.
// - testPickerGrantsThePortalsChoiceAsAFilter: present(using: .display) → the portal's backend
//   is asked for monitors with the metadata cursor; the observer gets a filter of 640x360; a
//   screenshot and a 1 s SCStream + SCRecordingOutput of it (an H.264 file ffprobe reads, about
//   a second, pictures changing with the moving window).
// - testPickerWithoutPortalFailsAndCancelIsHeard: a bus with neither Mutter nor a portal →
//   SCShareableContent.current throws naming Mutter and SCContentSharingPicker; a window of
//   $DISPLAY (an Xvfb standing in for Xwayland, XDG_SESSION_TYPE=wayland) as
//   desktopIndependentWindow: a screenshot and a stream's start throw naming the Wayland
//   backend, the missing portal and the display filter instead; the picker fails naming the
//   missing portal and what the Wayland backend can do instead; an inactive picker fails; with
//   a portal whose chooser is cancelled, the window's refusal names the picker, and the
//   observer hears the cancel.
// - testCaptureEngineRecordsUnderHeadlessMutter: Examples/ScreenCaptureEngine (the same code as
//   under Xvfb) with WAYLAND_DISPLAY, the moving window and a private PulseAudio's tones, 2 s
//   → exit 0, an H.264 640x360 movie whose frame count (ffprobe) is what the writer took,
//   lasting about 2 s, with two AAC tracks: 1 kHz (the desktop) and 440 Hz (the microphone).
import CoreMedia
import Foundation
import ScreenCaptureKit
import SwiftRecord
import SwiftRecordWayland
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class ScreenCaptureKitWaylandTests: WaylandTestCase {
    /// The class's desktop: Mutter at 640x360, PipeWire, the portal approving; made by the
    /// first test that needs it, stopped when the class ends.
    private static let shared = Locked<HeadlessGNOME?>(nil)

    override class func tearDown() {
        shared.withLock { d in
            d?.stop()
            d = nil
        }
        super.tearDown()
    }

    private func desktop() throws -> HeadlessGNOME {
        try ScreenCaptureKitWaylandTests.shared.withLock { (d: inout sending HeadlessGNOME?) throws -> HeadlessGNOME in
            if let d { return d }
            let made = try HeadlessGNOME(size: "640x360")
            do { try made.startPortal() } catch { made.stop(); throw error }
            d = made
            return made
        }
    }

    /// This process as a client of `desktop`'s session until the test ends: its bus, runtime
    /// directory and WAYLAND_DISPLAY, no DISPLAY.
    private func becomeClient(of desktop: HeadlessGNOME) {
        let keys = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "PIPEWIRE_REMOTE", "XDG_SESSION_TYPE"]
        let env = desktop.clientEnvironment(waylandDisplay: true)
        setEnvironment(Dictionary(uniqueKeysWithValues: keys.map { ($0, env[$0]) }))
    }

    /// `weston-simple-shm` moving in the top-left corner until the test ends.
    private func movingWindow(_ desktop: HeadlessGNOME) throws {
        try desktop.startMovingWindow()
        addTeardownBlock { desktop.kill9("weston-simple-shm") }
    }

    func testShareableContentListsMutterMonitorAndScreenshotMatchesGStreamer() async throws {
        guard Proc.which("gst-launch-1.0") != nil, Proc.which("gdbus") != nil else { throw XCTSkip("gst-launch-1.0 or gdbus is not installed") }
        let desktop = try desktop()
        becomeClient(of: desktop)
        let content = try await SCShareableContent.current
        XCTAssertEqual(content.displays.count, 1)
        let display = try XCTUnwrap(content.displays.first)
        let state = try Proc.run("gdbus", ["call", "--session", "--dest", "org.gnome.Mutter.DisplayConfig", "--object-path",
                                           "/org/gnome/Mutter/DisplayConfig", "--method", "org.gnome.Mutter.DisplayConfig.GetCurrentState"],
                                 environment: desktop.environment, timeout: 20)
        XCTAssertTrue(state.stdout.contains("('\(display.name)',"), "gdbus: \(state.stdout.prefix(300)) vs \(display.name)")
        XCTAssertEqual([display.width, display.height], [640, 360])
        XCTAssertEqual(display.frame, CGRect(x: 0, y: 0, width: 640, height: 360))
        XCTAssertTrue(content.windows.isEmpty && content.applications.isEmpty)
        let reason = try XCTUnwrap(content.windowsUnavailableReason)
        XCTAssertTrue(reason.contains("Wayland backend") && reason.contains("SCContentSharingPicker"), reason)

        for make in [{ try SCContentFilter(display: display, including: []) },
                     { try SCContentFilter(display: display, includingApplications: [], exceptingWindows: []) }] {
            XCTAssertThrowsError(try make()) { error in
                XCTAssertTrue("\(error)".contains("the Wayland backend cannot capture only chosen"), "\(error)")
                XCTAssertTrue("\(error)".contains("SCContentSharingPicker"), "\(error)")
            }
        }
        let filter = try SCContentFilter(display: display, excludingApplications: [], exceptingWindows: [])

        // GStreamer, the cast's first reader (a still screen sends one picture), reads a cast
        // of the same monitor that the portal's backend asked Mutter for.
        let portal = try ScreenCastPortal(options: .init(sourceTypes: .monitor, cursor: .hidden, persists: false))
        defer { portal.close() }
        let raw = path("gst.rgb")
        let gst = try Proc.run("gst-launch-1.0", ["-q", "pipewiresrc", "path=\(portal.streams[0].node)", "num-buffers=1", "!", "videoconvert", "!",
                                                  "video/x-raw,format=RGB", "!", "filesink", "location=\(raw)"],
                               environment: desktop.environment, timeout: 15)
        XCTAssertTrue(gst.succeeded, gst.stderr)
        let theirs = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        XCTAssertEqual(theirs.count, 640 * 360 * 3)
        let configuration = SCStreamConfiguration()
        configuration.showsCursor = false
        let image = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: configuration)
        XCTAssertEqual([image.width, image.height], [640, 360])
        let ours = image.packedRGB
        // No window and no cursor: the same desktop, pixel for pixel (within 6 per channel).
        let apart = zip(ours, theirs).filter { abs(Int($0) - Int($1)) > 6 }.count
        XCTAssertEqual(ours.count, theirs.count)
        XCTAssertEqual(apart, 0, "\(apart) of \(ours.count) channel values differ from GStreamer's")
        // A stream of the still desktop: one complete picture, then idle frames.
        let statuses = StatusCollector()
        configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
        let stream = SCStream(filter: filter, configuration: configuration, delegate: nil)
        try stream.addStreamOutput(statuses, type: .screen, sampleHandlerQueue: nil)
        try await stream.startCapture()
        try await Task.sleep(for: .milliseconds(500))
        try await stream.stopCapture()
        let seen = statuses.seen.withLock { $0 }
        XCTAssertEqual(seen.first, .complete)
        XCTAssertGreaterThan(seen.dropFirst().filter { $0 == .idle }.count, 5, "a still screen is idle: \(seen)")
        // The command line's screenshot through Mutter: the same pixels, as ffmpeg decodes the PNG.
        let png = path("mutter.png"), decoded = path("mutter.rgb")
        let shot = try record(desktop, ["screenshot", "--monitor", display.name, "--no-cursor", "-o", png], waylandDisplay: true)
        XCTAssertEqual(shot.status, 0, shot.stderr)
        XCTAssertTrue(shot.stderr.contains("wrote \(png): 640x360, monitor \(display.name) through GNOME's screen cast"), shot.stderr)
        try FF.ffmpeg(["-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", decoded])
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: decoded)))
        XCTAssertEqual(file.count, theirs.count)
        XCTAssertEqual(zip(file, theirs).filter { abs(Int($0) - Int($1)) > 6 }.count, 0, "the PNG differs from GStreamer's picture")
        configuration.sourceRect = CGRect(x: 560, y: 0, width: 80, height: 40)
        let part = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: configuration)
        XCTAssertEqual([part.width, part.height], [80, 40])
        let cut = part.packedRGB
        let rows = (0..<40).map { Array(ours[($0 * 640 + 560) * 3 ..< ($0 * 640 + 640) * 3]) }
        XCTAssertEqual(cut, rows.flatMap { $0 }, "the sourceRect's pixels of the whole screenshot")
    }

    /// The command line's screenshot by default through the portal (announced), and
    /// `--window` refused on Wayland naming what can be done.
    func testScreenshotCommandThroughThePortalAndWindowRefused() throws {
        let desktop = try desktop()
        let png = path("portal.png")
        let shot = try record(desktop, ["screenshot", "-o", png], waylandDisplay: true)
        XCTAssertEqual(shot.status, 0, shot.stderr)
        XCTAssertTrue(shot.stderr.contains("through the desktop portal") && shot.stderr.contains("wrote \(png): 640x360"), shot.stderr)
        let info = try FF.probe(png).stream
        XCTAssertEqual([info["codec_name"] as? String, "\(int(info["width"]) ?? 0)x\(int(info["height"]) ?? 0)"], ["png", "640x360"])
        let window = try record(desktop, ["screenshot", "--window", "0x1", "-o", path("window.png")], waylandDisplay: true)
        XCTAssertEqual(window.status, 2, window.stderr)
        XCTAssertTrue(window.stderr.contains("the Wayland backend cannot take window 0x1") && window.stderr.contains("chooser"), window.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("window.png")))
    }

    /// The statuses of a stream's pictures.
    final class StatusCollector: SCStreamOutput {
        let seen = Locked<[SCFrameStatus]>([])
        func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
            guard let info = CMSampleBufferGetSampleAttachmentsArray(sampleBuffer, createIfNecessary: false) as? [[SCStreamFrameInfo: Any]],
                  let raw = info.first?[.status] as? Int, let status = SCFrameStatus(rawValue: raw) else { return }
            seen.withLock { $0.append(status) }
        }
    }

    /// Hears a picker's outcome once.
    final class PickerObserver: SCContentSharingPickerObserver {
        let outcome = Locked<String?>(nil)
        let filter = Locked<SCContentFilter?>(nil)
        let heard = XCTestExpectation(description: "the picker's outcome")
        func contentSharingPicker(_ picker: SCContentSharingPicker, didCancelFor stream: SCStream?) { hear("cancelled") }
        func contentSharingPicker(_ picker: SCContentSharingPicker, didUpdateWith filter: SCContentFilter, for stream: SCStream?) {
            self.filter.withLock { $0 = filter }
            hear("picked")
        }
        func contentSharingPickerStartDidFailWithError(_ error: any Error) { hear("failed: \(error)") }
        private func hear(_ what: String) {
            outcome.withLock { $0 = what }
            heard.fulfill()
        }
    }

    /// Presents the shared picker with `style` and waits for what the observer hears.
    private func pick(_ style: SCShareableContentStyle, active: Bool = true) async -> PickerObserver {
        let picker = SCContentSharingPicker.shared
        let observer = PickerObserver()
        picker.add(observer)
        picker.isActive = active
        picker.present(using: style)
        await fulfillment(of: [observer.heard], timeout: 30)
        picker.remove(observer)
        picker.isActive = false
        return observer
    }

    final class Events: SCRecordingOutputDelegate {
        let events = Locked<[String]>([])
        func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) { events.withLock { $0.append("finished") } }
        func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) { events.withLock { $0.append("failed: \(error)") } }
    }

    func testPickerGrantsThePortalsChoiceAsAFilter() async throws {
        let desktop = try desktop()
        becomeClient(of: desktop)
        try movingWindow(desktop)
        let observer = await pick(.display)
        XCTAssertEqual(observer.outcome.withLock { $0 }, "picked")
        let filter = try XCTUnwrap(observer.filter.withLock { $0 })
        XCTAssertEqual(filter.contentRect, CGRect(x: 0, y: 0, width: 640, height: 360))
        let select = try XCTUnwrap(try desktop.portalCalls().last { $0.method == "SelectSources" }?.options)
        XCTAssertEqual(select["types"] as? Int, 1, "monitors")
        XCTAssertEqual(select["cursor_mode"] as? Int, 4, "metadata")

        let configuration = SCStreamConfiguration()
        let image = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: configuration)
        XCTAssertEqual([image.width, image.height], [640, 360])
        configuration.minimumFrameInterval = CMTime(value: 1, timescale: 30)
        let stream = SCStream(filter: filter, configuration: configuration, delegate: nil)
        let recording = SCRecordingOutputConfiguration()
        let movie = path("picked.mp4")
        (recording.outputURL, recording.outputFileType) = (URL(fileURLWithPath: movie), .mp4)
        let events = Events()
        let output = SCRecordingOutput(configuration: recording, delegate: events)
        try stream.addRecordingOutput(output)
        try await stream.startCapture()
        try await Task.sleep(for: .seconds(1))
        try await stream.stopCapture()
        XCTAssertEqual(events.events.withLock { $0 }, ["finished"])
        let (info, format) = try FF.probe(movie)
        XCTAssertEqual(info["codec_name"] as? String, "h264")
        XCTAssertEqual([int(info["width"]), int(info["height"])], [640, 360])
        XCTAssertGreaterThan(int(info["nb_read_frames"]) ?? 0, 10, "the moving window makes new pictures")
        XCTAssertEqual(Double(format["duration"] as? String ?? "") ?? 0, 1.0, accuracy: 0.4)
    }

    func testPickerWithoutPortalFailsAndCancelIsHeard() async throws {
        try XCTSkipUnless(XvfbServer.isInstalled && Proc.which("xmessage") != nil, "Xvfb or xmessage (x11-utils) is not installed")
        let desktop = try HeadlessGNOME(compositor: false)
        defer { desktop.stop() }
        becomeClient(of: desktop)
        // An Xvfb stands in for Xwayland: $DISPLAY beside WAYLAND_DISPLAY in a Wayland session.
        let xwayland = try XvfbServer(size: "320x240")
        defer { xwayland.stop() }
        let message = try Proc.spawn("xmessage", ["-geometry", "200x80+10+10", "-title", "sck-xwayland", "hello"], environment: xwayland.environment)
        defer { message.terminate() }
        setenv("DISPLAY", xwayland.display, 1)
        setenv("XDG_SESSION_TYPE", "wayland", 1)
        var window: SCWindow?
        for _ in 0..<100 where window == nil {
            window = try await SCShareableContent.content(xDisplay: nil).windows.first { $0.title == "sck-xwayland" }
            if window == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let filter = SCContentFilter(desktopIndependentWindow: try XCTUnwrap(window, "xmessage's window was not listed"))
        func refusal() async -> String {
            do {
                _ = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: SCStreamConfiguration())
                return "captured"
            } catch {
                return "\(error)"
            }
        }
        let noPortal = await refusal()
        XCTAssertTrue(noPortal.contains("the Wayland backend cannot capture window 0x") && noPortal.contains("no desktop portal answers"), noPortal)
        XCTAssertTrue(noPortal.contains("SCContentFilter(display:excludingWindows: [])"), noPortal)
        do {
            try await SCStream(filter: filter, configuration: SCStreamConfiguration(), delegate: nil).startCapture()
            XCTFail("a stream of an Xwayland window started")
        } catch {
            XCTAssertTrue("\(error)".contains("the Wayland backend cannot capture window"), "\(error)")
        }
        unsetenv("DISPLAY")
        do {
            _ = try await SCShareableContent.current
            XCTFail("listed displays without Mutter")
        } catch {
            XCTAssertTrue("\(error)".contains("GNOME's Mutter") && "\(error)".contains("SCContentSharingPicker"), "\(error)")
        }
        let inactive = await pick(.window, active: false)
        XCTAssertTrue(inactive.outcome.withLock { $0 }?.contains("isActive = true") == true, "\(inactive.outcome.withLock { $0 } ?? "")")
        let failed = await pick(.window)
        let text = failed.outcome.withLock { $0 } ?? ""
        XCTAssertTrue(text.hasPrefix("failed: ") && text.contains("no desktop portal"), text)
        XCTAssertTrue(text.contains("the Wayland backend captures a window only through the portal"), text)
        XCTAssertTrue(text.contains("SCContentFilter(display:excludingWindows: [])"), text)
        let applications = await pick(.application)
        XCTAssertTrue(applications.outcome.withLock { $0 }?.contains("not applications") == true)

        try desktop.startPortal(chooser: .cancel)
        setenv("DISPLAY", xwayland.display, 1)
        let withPortal = await refusal()
        XCTAssertTrue(withPortal.contains("the Wayland backend cannot capture window 0x") && withPortal.contains("SCContentSharingPicker.shared.present(using: .window)"), withPortal)
        unsetenv("DISPLAY")
        let cancelled = await pick(.window)
        XCTAssertEqual(cancelled.outcome.withLock { $0 }, "cancelled")
        XCTAssertEqual(try desktop.portalCalls().last { $0.method == "SelectSources" }?.options["types"] as? Int, 2, "windows")
    }

    func testCaptureEngineRecordsUnderHeadlessMutter() throws {
        let example = PackagePaths.product("ScreenCaptureEngine")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: example), "build the examples first (swift build)")
        let desktop = try desktop()
        try movingWindow(desktop)
        let movie = path("engine.mov")
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio missing; run scripts/install-deps.sh")
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        try pulse.playDesktopAndMicrophoneTones(in: path("")).forEach { track($0) }
        let environment = desktop.clientEnvironment(waylandDisplay: true).merging(["PULSE_SERVER": pulse.address]) { $1 }
        let result = try Proc.run(example, [movie, "2", "sound"], environment: environment, timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        print("ScreenCaptureKitWaylandTests: \(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
        let counts = result.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        XCTAssertEqual(counts.count, 4, result.stdout)
        let sound = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name", "-of", "csv=p=0", movie])
        XCTAssertEqual(sound.stdout.split(separator: "\n"), ["aac", "aac"], "two sound tracks: \(sound.stdout)")
        for (track, tone) in [(0, 1000.0), (1, 440.0)] {
            XCTAssertGreaterThan(AudioCheck.medianToneShare(try AudioCheck.decode(movie, track: track).dropFirst(24_000).prefix(48_000), frequency: tone), 0.8)
        }
        XCTAssertGreaterThan(counts.first ?? 0, 15, "weston-simple-shm redraws every frame: a picture for most of the 60 ticks in 2 s")
        let (info, format) = try FF.probe(movie)
        XCTAssertEqual(info["codec_name"] as? String, "h264")
        XCTAssertEqual([int(info["width"]), int(info["height"])], [640, 360])
        XCTAssertEqual(int(info["nb_read_frames"]), counts.count == 4 ? counts[1] : -1, "ffprobe counts the frames the writer took")
        XCTAssertEqual(Double(format["duration"] as? String ?? "") ?? 0, 2.0, accuracy: 0.6)
    }
}
