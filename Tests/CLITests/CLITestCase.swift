import Foundation
import TestSupport
import XCTest

/// Base of the tests that run the built `swift-record` (MediaTestCase: a directory per test,
/// the skips, the children stopped at teardown), with the assertions they share.
class CLITestCase: MediaTestCase {
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
