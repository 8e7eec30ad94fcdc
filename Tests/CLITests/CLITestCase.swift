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

    override func tearDownWithError() throws { if let dir { try? FileManager.default.removeItem(at: dir) } }
}
