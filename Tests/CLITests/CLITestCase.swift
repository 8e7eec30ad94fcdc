import Foundation
import TestSupport
import XCTest

/// Base of the tests that run the built `swift-record`: skips without ffmpeg/ffprobe, fails
/// when the binary is not built, and gives each test a temporary directory it removes.
class CLITestCase: XCTestCase {
    var dir: URL!
    let binary = PackagePaths.product("swift-record")

    override func setUpWithError() throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestError.failed("\(binary) is not built; run `swift build` first (make test does)")
        }
        dir = try makeTemporaryDirectory()
    }

    /// Children started with `spawnTracked`; teardown kills and reaps any still running.
    private var children: [ChildProcess] = []

    /// Starts `swift-record` (or `executable`) so that teardown stops it if the test does not.
    func spawnTracked(_ arguments: [String], executable: String? = nil, stdin: Int32? = nil,
                      stderr: ErrorOutput = .captured) throws -> ChildProcess {
        let child = try Proc.spawn(executable ?? binary, arguments, stdin: stdin, stderr: stderr)
        children.append(child)
        return child
    }

    override func tearDownWithError() throws {
        for child in children { child.terminate() }
        children.removeAll()
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// `p`'s bytes are still `data`.
    func assertUnchanged(_ p: String, _ data: Data, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try? Data(contentsOf: URL(fileURLWithPath: p)), data, "\(what): \(p) changed", file: file, line: line)
    }

    /// A refusal: a non-zero exit that is not a crash, its message naming each of `says`.
    func assertRefused(_ r: ProcessResult, says: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(r.status, 0, "\(what) should fail", file: file, line: line)
        XCTAssertLessThan(r.status, 128, "\(what): crashed: \(r.stderr)", file: file, line: line)
        for s in says { XCTAssertTrue(r.stderr.contains(s), "\(what): '\(s)' missing from: \(r.stderr)", file: file, line: line) }
    }
}
