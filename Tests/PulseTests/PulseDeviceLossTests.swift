import Foundation
import SwiftRecord
import SwiftRecordPulse
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A server of its own for each test, because each test takes something away from it.
final class PulseDeviceLossTests: XCTestCase {
    var server: PrivatePulseServer!
    var environment: PulseServerEnvironment?

    override func setUpWithError() throws {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio/pactl/pacat not installed; run scripts/install-deps.sh")
        server = try PrivatePulseServer()
        environment = PulseServerEnvironment(server.address)
    }

    override func tearDown() {
        environment?.restore()
        server?.stop()
        super.tearDown()
    }

    /// Reads until nil on a thread of its own; the seconds from `loss` to the nil, or nil
    /// if it did not come within 10 s (the read is then interrupted so the test never hangs).
    func secondsUntilEnd(of source: PulseAudioSource, after loss: () throws -> Void) throws -> Double? {
        let ended = DispatchSemaphore(value: 0)
        Thread {
            while (try? source.nextChunk()) != nil {}
            ended.signal()
        }.start()
        usleep(300_000)
        let lost = MonotonicClock().now().seconds
        try loss()
        guard ended.wait(timeout: .now() + 10) == .success else {
            source.interrupt()
            _ = ended.wait(timeout: .now() + 5)
            return nil
        }
        return MonotonicClock().now().seconds - lost
    }

    func testServerKilledMidRecordingEndsTheSourceWithAReason() throws {
        let source = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor"))
        defer { source.stop() }
        try source.start()
        XCTAssertNotNil(try source.nextChunk())
        let seconds = try secondsUntilEnd(of: source) { server.kill9() }
        let elapsed = try XCTUnwrap(seconds, "nextChunk did not return nil within 10 s of the server's death")
        XCTAssertLessThan(elapsed, 2.5)
        let reason = try XCTUnwrap(source.endReason)
        XCTAssertTrue(reason.contains("server went away"), reason)
        XCTAssertNil(try source.nextChunk())
        source.stop()
        XCTAssertFalse(PulseAudioSource.isServerReachable())
    }

    func testDeviceRemovedMidRecordingEndsTheSourceWithAReason() throws {
        let source = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor"))
        defer { source.stop() }
        try source.start()
        XCTAssertNotNil(try source.nextChunk())
        let seconds = try secondsUntilEnd(of: source) { try server.pactl(["unload-module", "module-null-sink"]) }
        let elapsed = try XCTUnwrap(seconds, "nextChunk did not return nil within 10 s of the device's removal")
        XCTAssertLessThan(elapsed, 2.5)
        let reason = try XCTUnwrap(source.endReason)
        XCTAssertTrue(reason.contains("test.monitor"), reason)
    }
}
