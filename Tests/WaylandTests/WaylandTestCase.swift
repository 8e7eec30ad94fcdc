import Foundation
import TestSupport
import XCTest

/// What every Wayland test class shares: a temporary directory per test and the built
/// `swift-record` run against a test's private desktop (`HeadlessGNOME`).
class WaylandTestCase: XCTestCase {
    var dir: URL!
    let binary = PackagePaths.product("swift-record")
    /// Arguments every `record` adds after the test's own.
    var commonArguments: [String] { [] }

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory()
    }

    override func tearDownWithError() throws {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Runs `swift-record arguments` as a client of `desktop` (with `WAYLAND_DISPLAY` when asked) to its end.
    func record(_ desktop: HeadlessGNOME, _ arguments: [String], waylandDisplay: Bool = false, timeout: Double = 60) throws -> ProcessResult {
        try Proc.run(binary, arguments + commonArguments, environment: desktop.clientEnvironment(waylandDisplay: waylandDisplay), timeout: timeout)
    }
}
