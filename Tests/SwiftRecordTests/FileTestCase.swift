import Foundation
import TestSupport
import XCTest

/// What the library's file-writing test classes share (MediaTestCase): ffmpeg/ffprobe
/// present (they check every output), and a temporary directory per test, removed after it.
/// They use the library in process, not the built binary.
class FileTestCase: MediaTestCase {
    override class var runsTheBinary: Bool { false }
}
