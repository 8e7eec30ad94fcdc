import Foundation
import TestSupport
import XCTest

/// What the library's file-writing test classes share: ffmpeg/ffprobe present (they check
/// every output), and a temporary directory per test, removed after it.
class FileTestCase: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        dir = try makeTemporaryDirectory()
    }

    override func tearDownWithError() throws {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// `name` inside the test's directory.
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}
