import Foundation
import XCTest

/// The base of every test class that writes files or runs programs: a temporary directory
/// of the test's own (`dir`, `path(_:)`), made before each test and removed after it; the
/// skips when a tool the class checks with is missing; and the children a test starts,
/// killed and reaped at teardown when the test did not (also when it failed).
///
/// A class says what it needs by overriding `checksWithFFmpeg` (skipped without
/// ffmpeg/ffprobe) and `runsTheBinary` (fails when the built `swift-record` is missing).
/// Servers shared by a class's tests are started in the subclass's `class func setUp`.
open class MediaTestCase: XCTestCase {
    /// This test's own temporary directory.
    public var dir: URL!
    /// The built `swift-record` (`.build/debug`, or `SWIFT_RECORD_BUILD_DIR`'s).
    public let binary = PackagePaths.product("swift-record")

    /// Whether the class's tests check their files with ffmpeg and ffprobe (skipped without them).
    open class var checksWithFFmpeg: Bool { true }
    /// Whether the class runs the built `swift-record` (each test fails when it is not built).
    open class var runsTheBinary: Bool { true }

    /// Children started by `spawnTracked` or handed to `track`, stopped at teardown.
    private var children: [ChildProcess] = []

    open override func setUpWithError() throws {
        try super.setUpWithError()
        if type(of: self).checksWithFFmpeg {
            try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        }
        if type(of: self).runsTheBinary, !FileManager.default.isExecutableFile(atPath: binary) {
            throw TestError.failed("\(binary) is not built; run `swift build --build-tests` first (make test does)")
        }
        dir = try makeTemporaryDirectory()
    }

    open override func tearDownWithError() throws {
        stopChildren()
        if let dir { try? FileManager.default.removeItem(at: dir) }
        dir = nil
        try super.tearDownWithError()
    }

    /// `name` inside the test's directory.
    public func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Starts `swift-record` (or `executable`) so that teardown stops it if the test does not.
    public func spawnTracked(_ arguments: [String], executable: String? = nil, stdinPath: String? = nil,
                             environment: [String: String]? = nil, stdin: Int32? = nil,
                             stderr: ErrorOutput = .captured) throws -> ChildProcess {
        track(try Proc.spawn(executable ?? binary, arguments, stdinPath: stdinPath, environment: environment,
                             stdin: stdin, stderr: stderr))
    }

    /// Keeps `child` (a player, a server of one test) to be stopped at teardown.
    @discardableResult
    public func track(_ child: ChildProcess) -> ChildProcess {
        children.append(child)
        return child
    }

    /// Kills and reaps every tracked child still running (teardown does it).
    public func stopChildren() {
        for child in children { child.terminate() }
        children.removeAll()
    }
}
