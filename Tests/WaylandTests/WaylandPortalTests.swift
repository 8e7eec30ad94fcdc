// Wayland capture through the desktop portal (issue 27): the real xdg-desktop-portal frontend on
// a HeadlessGNOME's private bus, with the permission store, and a tests-only backend
// (Helpers/portal-backend.py) in place of the desktop's chooser, which grants Mutter's primary
// monitor or cancels (PortalDesktop.swift).
//
// Catalogue:
// - testPortalIsTheDefaultAndRecordsTheMovingWindow: no --screencast, a portal on the bus → the
//   portal chosen and announced; 3 s at 30 fps = 90 frames of 1280x720 (ffprobe), the window's
//   pictures change (framemd5), 0 dropped; the backend was asked for monitor|window with the
//   cursor embedded and persist mode 2.
// - testRestoreTokenIsWrittenThenSentBack: --restore-token FILE (absent) → after the run FILE holds
//   the UUID the portal gave, the backend received no restore data; a second run sends it back
//   (the backend receives the restore data it gave the first time) and records; --no-cursor
//   reaches the backend as cursor mode hidden.
// - testRestoreTokenFileFollowsTheRulesForWrittenFiles: a symbolic link is followed (the
//   target written, the link kept); a device node or directory is refused (exit 2) before the
//   portal is asked, nothing recorded; a file that holds no UUID is refused, left as it was.
// - testCancelledChooserIsAClearErrorAndNothingIsWritten: the backend answers Start with
//   response 1 → exit 1, "cancelled in the desktop's chooser", no output, no token file.
// - testCtrlCWhileTheChooserIsOpenStopsAtOnce: the backend never answers Start (a chooser left
//   open); SIGINT once Start was asked → exit 1 within 2 s of the signal, "stopped while the
//   desktop's chooser was open", no output, no token file, the request closed.
// - testMissingPortalNamesWhatToInstall: --screencast portal on a bus without a portal → exit 1
//   naming xdg-desktop-portal and a backend, nothing written; without --screencast Mutter is
//   chosen, announced.
// - testScreenCastPortalOnItsOwn: the library's ScreenCastPortal in process → one monitor stream
//   of 1280x720 with its PipeWire node, a restore token (a UUID), a PipeWire remote that is a
//   connected socket; WaylandSource through the portal reads a picture; three rounds leave no
//   descriptor open.
// - testCursorFromMetadataIsDrawnWhereThePointerIs: the pointer put at (640, 360); sources that ask
//   for the cursor as metadata (SPA_META_Cursor), through Mutter and through the portal, draw it
//   there: the 48x48 square below-right of the hotspot differs from a hidden-cursor picture and
//   matches the compositor's own embedded drawing (nearly every pixel within 24 per channel);
//   a far square is the same in all.
// - testCompositorGoneDuringAPortalCastEndsTheRecording (issue 37, 5): Mutter SIGKILLed 1 s
//   into a portal screen cast → exit 1 within 5 s naming the compositor, the frames so far
//   kept and decodable (before: exit 0 after 8 s, most of it a frozen picture repeated).
import Foundation
import SwiftRecord
import SwiftRecordWayland
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class WaylandPortalTests: WaylandTestCase {
    private func selects(_ desktop: HeadlessGNOME) throws -> [[String: Any]] {
        try desktop.portalCalls().filter { $0.method == "SelectSources" }.map(\.options)
    }

    func testPortalIsTheDefaultAndRecordsTheMovingWindow() throws {
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        try desktop.startPortal()
        let out = path("portal.mp4"), statsPath = path("portal.json")
        let r = try record(desktop, ["--source", "wayland", "--duration", "3", "--fps", "30", "--stats-json", statsPath, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr + desktop.stderr(of: HeadlessGNOME.portalFrontend).suffix(800))
        XCTAssertTrue(r.stderr.contains("screen cast through the desktop portal"), r.stderr)
        XCTAssertTrue(r.stderr.contains("the screen the desktop portal granted (PipeWire node"), r.stderr)
        let (stream, _) = try FF.probe(out)
        XCTAssertEqual(int(stream["nb_read_frames"]), 90)
        XCTAssertEqual(int(stream["width"]), 1280)
        XCTAssertEqual(int(stream["height"]), 720)
        let hashes = FF.hashes(try FF.framemd5(out, outputArgs: ["-threads", "1"]))
        XCTAssertGreaterThan(Set(hashes).count, 45, "the window's pictures should change")
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath))) as? [String: Any])
        XCTAssertEqual(stats["framesDropped"] as? Int, 0)
        let select = try XCTUnwrap(try selects(desktop).first)
        XCTAssertEqual(int(select["types"]), 3, "monitor|window")
        XCTAssertEqual(int(select["cursor_mode"]), 2, "embedded")
        XCTAssertEqual(int(select["persist_mode"]), 2)
        XCTAssertNil(select["restore_data"])
        XCTAssertTrue(try desktop.portalCalls().contains { $0.method == "Close" }, "the session should be closed on stop")
    }

    func testCompositorGoneDuringAPortalCastEndsTheRecording() throws {
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        try desktop.startPortal()
        let out = path("gone.mp4"), log = path("gone.csv")
        let (r, elapsed) = try recordAndKillTheCompositor(desktop, ["--source", "wayland", "--screencast", "portal", "--duration", "30", "-o", out],
                                                          log: log)
        XCTAssertFalse(r.timedOut, "the recording should end when the compositor goes")
        XCTAssertLessThan(elapsed, 5, "the recording should notice the compositor gone")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("compositor"), r.stderr)
        XCTAssertGreaterThanOrEqual(int(try FF.probe(out).stream["nb_read_frames"]) ?? 0, 30)
        let decode = try Proc.run("ffmpeg", ["-v", "warning", "-i", out, "-f", "null", "-"])
        XCTAssertTrue(decode.succeeded && decode.stderr.isEmpty, decode.stderr)
    }

    func testRestoreTokenIsWrittenThenSentBack() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal()
        let token = path("token"), first = path("first.mkv"), second = path("second.mkv")
        let a = try record(desktop, ["--source", "wayland", "--screencast", "portal", "--restore-token", token, "--frames", "10", "-o", first])
        XCTAssertEqual(a.status, 0, a.stderr)
        let written = try String(contentsOfFile: token, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertNotNil(UUID(uuidString: written), "the token file should hold the portal's UUID, not '\(written)'")
        XCTAssertNil(try selects(desktop).first?["restore_data"], "the first run has no token to send")

        let b = try record(desktop, ["--source", "wayland", "--restore-token", token, "--no-cursor", "--frames", "10", "-o", second])
        XCTAssertEqual(b.status, 0, b.stderr)
        XCTAssertEqual(int(try FF.probe(second).stream["nb_read_frames"]), 10)
        let sent = try selects(desktop)
        XCTAssertEqual(sent.count, 2)
        // The frontend swaps a valid token for the restore data the backend gave with it.
        let restored = try XCTUnwrap(sent.last?["restore_data"] as? [Any], "the second run should send the token back: \(sent)")
        XCTAssertEqual(restored.count, 3)
        XCTAssertEqual(restored.first as? String, "swift-record-tests")
        XCTAssertEqual(restored.last as? String, "primary-monitor")
        XCTAssertEqual(int(sent.last?["cursor_mode"]), 1, "--no-cursor: hidden")
        let kept = try String(contentsOfFile: token, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertNotNil(UUID(uuidString: kept))
    }

    func testRestoreTokenFileFollowsTheRulesForWrittenFiles() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal()
        // A link to a file elsewhere: the file is written, the link stays a link.
        let elsewhere = dir.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        let target = elsewhere.appendingPathComponent("token").path, link = path("token-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let r = try record(desktop, ["--source", "wayland", "--restore-token", link, "--frames", "5", "-o", path("linked.mkv")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), target)
        XCTAssertNotNil(UUID(uuidString: try String(contentsOfFile: target, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))

        let calls = try desktop.portalCalls().count
        for bad in ["/dev/null", dir.path] {
            let out = path("refused.mkv")
            let refused = try record(desktop, ["--source", "wayland", "--restore-token", bad, "--frames", "5", "-o", out])
            XCTAssertEqual(refused.status, 2, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("--restore-token") || refused.stderr.contains(bad), refused.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        XCTAssertEqual(try desktop.portalCalls().count, calls, "refused before the portal was asked")

        let notAToken = path("not-a-token")
        try "hello\n".write(toFile: notAToken, atomically: true, encoding: .utf8)
        let out = path("not.mkv")
        let c = try record(desktop, ["--source", "wayland", "--restore-token", notAToken, "--frames", "5", "-o", out])
        XCTAssertEqual(c.status, 2, c.stderr)
        XCTAssertTrue(c.stderr.contains("does not hold a restore token"), c.stderr)
        XCTAssertEqual(try String(contentsOfFile: notAToken, encoding: .utf8), "hello\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testCancelledChooserIsAClearErrorAndNothingIsWritten() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal(chooser: .cancel)
        let out = path("cancelled.mp4"), token = path("token")
        let r = try record(desktop, ["--source", "wayland", "--screencast", "portal", "--restore-token", token, "--duration", "2", "-o", out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("cancelled in the desktop's chooser"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing was recorded"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertFalse(FileManager.default.fileExists(atPath: token))
        XCTAssertTrue(try desktop.portalCalls().contains { $0.method == "Start" }, "the chooser should have been asked")
    }

    func testCtrlCWhileTheChooserIsOpenStopsAtOnce() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal(chooser: .hold)
        let out = path("held.mp4"), token = path("token")
        let child = try Proc.spawn(binary, ["--source", "wayland", "--screencast", "portal", "--restore-token", token, "--duration", "5", "-o", out],
                                   environment: desktop.clientEnvironment())
        defer { child.terminate() }
        // The chooser is open once the backend has been asked to Start.
        let deadline = Date().addingTimeInterval(30)
        while try !desktop.portalCalls().contains(where: { $0.method == "Start" }), Date() < deadline { usleep(50_000) }
        XCTAssertTrue(try desktop.portalCalls().contains { $0.method == "Start" }, child.currentStderr())
        child.signal(SIGINT)
        let interrupted = Date()
        let r = child.wait(timeout: 20)
        XCTAssertLessThan(Date().timeIntervalSince(interrupted), 2, "Ctrl-C should end the wait for the chooser at once")
        XCTAssertFalse(r.timedOut)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("stopped while the desktop's chooser was open"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing was recorded"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertFalse(FileManager.default.fileExists(atPath: token))
        XCTAssertTrue(try desktop.portalCalls().contains { $0.method == "RequestClose" }, "the chooser's request should be closed")
    }

    func testMissingPortalNamesWhatToInstall() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        let out = path("none.mp4")
        let r = try record(desktop, ["--source", "wayland", "--screencast", "portal", "--duration", "2", "-o", out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("xdg-desktop-portal package and a backend for the desktop"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing was recorded"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // Without --screencast, Mutter is asked instead, and that is said.
        let fallback = path("mutter.mkv")
        let m = try record(desktop, ["--source", "wayland", "--frames", "5", "-o", fallback])
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertTrue(m.stderr.contains("no desktop portal on the session bus; screen cast through GNOME's Mutter"), m.stderr)
        XCTAssertEqual(int(try FF.probe(fallback).stream["nb_read_frames"]), 5)
    }

    func testCursorFromMetadataIsDrawnWhereThePointerIs() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal()
        try desktop.placePointer(x: 640, y: 360)
        setEnvironment(["DBUS_SESSION_BUS_ADDRESS": desktop.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "",
                        "XDG_RUNTIME_DIR": desktop.environment["XDG_RUNTIME_DIR"] ?? ""])

        /// BGRA bytes of two squares (below-right of the pointer's hotspot, and far from it) of
        /// a picture from a source made with `configuration`.
        func squares(_ configuration: WaylandSource.Configuration, side: Int = 48) throws -> (near: [UInt8], far: [UInt8]) {
            let source = try WaylandSource(configuration: configuration)
            defer { source.stop() }
            let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .bgra, maximumBufferCount: 4)
            var frame = try XCTUnwrap(try source.nextFrame(from: pool))
            // The cursor's metadata may come with a later buffer than the first picture.
            for _ in 0..<5 {
                usleep(50_000)
                frame = try XCTUnwrap(try source.nextFrame(from: pool))
            }
            func square(x: Int, y: Int) -> [UInt8] {
                frame.pixelBuffer.withReadAccess { planes in
                    let plane = planes[0]
                    var bytes: [UInt8] = []
                    for row in y..<(y + side) {
                        let line = (plane.baseAddress + row * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                        bytes.append(contentsOf: UnsafeBufferPointer(start: line + x * 4, count: side * 4))
                    }
                    return bytes
                }
            }
            return (square(x: 640, y: 360), square(x: 100, y: 600))
        }
        var metadata = WaylandSource.Configuration(screenCast: .mutter)
        metadata.drawsCursorFromMetadata = true
        var portalMetadata = WaylandSource.Configuration(screenCast: .portal)
        portalMetadata.drawsCursorFromMetadata = true
        let hidden = try squares(.init(screenCast: .mutter, showsCursor: false))
        let embedded = try squares(.init(screenCast: .mutter))
        XCTAssertTrue(embedded.near != hidden.near, "the compositor should draw the pointer at (640, 360)")
        for (name, configuration) in [("mutter", metadata), ("portal", portalMetadata)] {
            let drawn = try squares(configuration)
            XCTAssertTrue(drawn.near != hidden.near, "\(name): the cursor from metadata should be drawn at (640, 360)")
            let pixels = drawn.near.count / 4
            let close = stride(from: 0, to: drawn.near.count, by: 4).filter { i in
                (0..<3).allSatisfy { abs(Int(drawn.near[i + $0]) - Int(embedded.near[i + $0])) <= 24 }
            }.count
            XCTAssertGreaterThan(Double(close) / Double(pixels), 0.97, "\(name): drawn as the compositor draws it (\(close) of \(pixels) pixels)")
            XCTAssertTrue(drawn.far == hidden.far, "\(name): away from the pointer the pictures are the same")
        }
        XCTAssertTrue(try desktop.portalCalls().contains { $0.method == "SelectSources" && int($0.options["cursor_mode"]) == 4 },
                      "the portal should have been asked for cursor mode metadata")
    }

    func testScreenCastPortalOnItsOwn() throws {
        let desktop = try HeadlessGNOME()
        defer { desktop.stop() }
        try desktop.startPortal()
        setEnvironment(["DBUS_SESSION_BUS_ADDRESS": desktop.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "",
                        "XDG_RUNTIME_DIR": desktop.environment["XDG_RUNTIME_DIR"] ?? ""])
        func openDescriptors() -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
        }
        XCTAssertTrue(ScreenCastPortal.isAvailable())
        func round() throws {
            let portal = try ScreenCastPortal(options: .init(sourceTypes: .monitor))
            XCTAssertEqual(portal.streams.count, 1)
            let stream = try XCTUnwrap(portal.streams.first)
            XCTAssertGreaterThan(stream.node, 0)
            XCTAssertEqual(stream.size, VideoSize(width: 1280, height: 720))
            XCTAssertEqual(stream.sourceType, .monitor)
            XCTAssertNotNil(portal.restoreToken.flatMap(UUID.init(uuidString:)), "\(String(describing: portal.restoreToken))")
            let remote = try portal.openPipeWireRemote()
            var st = stat()
            XCTAssertEqual(fstat(remote.rawValue, &st), 0)
            XCTAssertEqual(st.st_mode & S_IFMT, S_IFSOCK, "the PipeWire remote is a socket")
            try remote.close()
            portal.close()
            portal.close()

            let source = try WaylandSource(configuration: .init(screenCast: .portal, showsCursor: false))
            XCTAssertEqual(source.screenCast, .portal)
            XCTAssertEqual(source.nativeSize, VideoSize(width: 1280, height: 720))
            let pool = try PixelBufferPool(width: 1280, height: 720, pixelFormat: .bgra, maximumBufferCount: 4)
            XCTAssertFalse(try XCTUnwrap(try source.nextFrame(from: pool)).isUnchanged)
            source.stop()
        }
        try round()
        let before = openDescriptors()
        for _ in 0..<3 { try round() }
        XCTAssertEqual(openDescriptors(), before, "descriptors left open")
    }
}
