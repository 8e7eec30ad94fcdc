import Foundation
import ReplayKit
import SwiftRecordWayland
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// ReplayKit's in-app capture on Wayland alone (`$WAYLAND_DISPLAY`, no `$DISPLAY`), where a
/// client cannot name its windows to a recorder: `RPScreenRecorder` asks the desktop portal,
/// offering windows and screens, and hands the granted stream's pictures to the handler as
/// `.video` samples. A HeadlessGNOME with the portal (its test backend grants Mutter's
/// 1280x720 monitor) and a private PulseAudio server for the sound; in process.
final class ReplayKitWaylandTests: WaylandTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    func testInAppCaptureOnWaylandAsksThePortalForAWindowOrScreen() async throws {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio/pactl/pacat not installed; run scripts/install-deps.sh")
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        try desktop.startPortal()
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        let values: [String: String?] = [
            "DISPLAY": nil, "WAYLAND_DISPLAY": "wayland-0", "PULSE_SERVER": pulse.address,
            "DBUS_SESSION_BUS_ADDRESS": desktop.environment["DBUS_SESSION_BUS_ADDRESS"], "XDG_RUNTIME_DIR": desktop.environment["XDG_RUNTIME_DIR"],
        ]
        let saved = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (name, value) in values {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }

        struct Seen: Sendable { var pictures = 0, width = 0, height = 0 }
        let seen = Locked(Seen())
        let recorder = RPScreenRecorder.shared()
        recorder.setSources(screen: nil, appAudio: nil, microphone: nil)
        XCTAssertTrue(recorder.isAvailable)
        let started: (any Error)? = await withCheckedContinuation { done in
            recorder.startCapture(handler: { sampleBuffer, bufferType, _ in
                guard bufferType == .video, let pixelBuffer = CMSampleBufferGetImageBuffer(sampleBuffer) else { return }
                seen.withLock { s in
                    s.pictures += 1
                    (s.width, s.height) = (CVPixelBufferGetWidth(pixelBuffer), CVPixelBufferGetHeight(pixelBuffer))
                }
            }, completionHandler: { done.resume(returning: $0) })
        }
        XCTAssertNil(started, desktop.stderr(of: HeadlessGNOME.portalFrontend).suffix(800).description)
        try await Task.sleep(for: .seconds(2))
        try await recorder.stopCapture()
        let result = seen.withLock { $0 }
        XCTAssertGreaterThanOrEqual(result.pictures, 30, "two seconds at 30 fps: \(result)")
        XCTAssertEqual(result.width, 1280)
        XCTAssertEqual(result.height, 720)
        let selects = try desktop.portalCalls().filter { $0.method == "SelectSources" }.map(\.options)
        XCTAssertEqual(selects.count, 1)
        XCTAssertEqual(int(selects.first?["types"]), 3, "monitor | window offered: \(selects)")
    }
}
