import Foundation
import TestSupport
import XCTest

/// What every Wayland test class shares (MediaTestCase: a directory per test, the skips) and
/// the built `swift-record` run against a test's private desktop (`HeadlessGNOME`).
class WaylandTestCase: MediaTestCase {
    /// Arguments every `record` adds after the test's own.
    var commonArguments: [String] { [] }

    /// Starts `swift-record arguments` (with a timing log at `log`) as a client of `desktop`,
    /// SIGKILLs the compositor (and its demo window) once 30 frames are in, and returns how
    /// the recording ended and how many seconds after the kill.
    func recordAndKillTheCompositor(_ desktop: HeadlessGNOME, _ arguments: [String], log: String) throws -> (ProcessResult, TimeInterval) {
        let child = try Proc.spawn(binary, arguments + ["--timing-log", log], environment: desktop.clientEnvironment())
        defer { child.terminate() }
        XCTAssertNotNil(TimingLogFile.waitForFrame(30, in: log, timeout: 30), child.currentStderr())
        desktop.kill9("weston-simple-shm")
        desktop.kill9("mutter")
        let killed = Date()
        let r = child.wait(timeout: 20)
        return (r, Date().timeIntervalSince(killed))
    }

    /// Runs `swift-record arguments` as a client of `desktop` (with `WAYLAND_DISPLAY` when asked) to its end.
    func record(_ desktop: HeadlessGNOME, _ arguments: [String], waylandDisplay: Bool = false, timeout: Double = 60) throws -> ProcessResult {
        try Proc.run(binary, arguments + commonArguments, environment: desktop.clientEnvironment(waylandDisplay: waylandDisplay), timeout: timeout)
    }
}
