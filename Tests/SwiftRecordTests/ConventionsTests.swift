import Foundation
import TestSupport
import XCTest

// Catalogue (issue 26, the package's conventions):
// - testHelpersForTheCommandLineAndTestsAreNotPublic: ValueParsing, EncoderMemory, MediaFileReader,
//   AudioClockSync, SwiftRecordVersion, the fuzz entry points, Y4MStreamHeader.parse and
//   TimingLog.record are `package`, not public API.
// - testEveryPublicDeclarationIsInTheDocumentationTopics: whatever is public is curated on the
//   DocC landing page, so public means documented.
// - testNoHandWrittenInterruptRetries: reads and writes retry EINTR through swift-system's
//   FileDescriptor, not through loops of our own (the one readv wrapper aside).

/// What `public` means in SwiftRecord: the documented API, nothing the command line, the tests
/// or the fuzzers need only for themselves.
final class ConventionsTests: XCTestCase {
    static let landingPage = PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/SwiftRecord.docc/SwiftRecord.md")

    /// The top-level names declared `public` in the library's sources.
    static func publicTopLevelNames() throws -> [String] {
        let text = try PortingTableTests.sourceLines("SwiftRecord").joined(separator: "\n")
        return PortingTableTests.matches(
            #"(?m)^(?:@\w+ )*public (?:final )?(?:struct|class|enum|protocol|actor|typealias|let|var) (\w+)"#, in: text)
            + PortingTableTests.matches(#"(?m)^(?:@\w+ )*public func (\w+\()"#, in: text)
    }

    func testHelpersForTheCommandLineAndTestsAreNotPublic() throws {
        let names = Set(try ConventionsTests.publicTopLevelNames())
        XCTAssertGreaterThan(names.count, 50, "the public declarations were not found")
        for helper in ["ValueParsing", "EncoderMemory", "MediaFileReader", "AudioClockSync", "SwiftRecordVersion",
                       "exerciseValueParsers(", "exerciseY4MHeaderParser("] {
            XCTAssertFalse(names.contains(helper), "\(helper) is public; it serves the command line, the tests or the fuzzers only (package)")
        }
        let members = try PortingTableTests.sourceLines("SwiftRecord").joined(separator: "\n")
        for member in ["public func record(frame", "public static let header", "public static func parse(line"] {
            XCTAssertFalse(members.contains(member), "'\(member)' is an internal step (package), not API")
        }
    }

    func testEveryPublicDeclarationIsInTheDocumentationTopics() throws {
        let page = try String(contentsOf: ConventionsTests.landingPage, encoding: .utf8)
        for name in try ConventionsTests.publicTopLevelNames() {
            let link = name.hasSuffix("(") ? "``\(name)" : "``\(name)``"
            XCTAssertTrue(page.contains(link), "\(name) is public but not in SwiftRecord.md's topics: document it, or make it package")
        }
    }

    func testNoHandWrittenInterruptRetries() throws {
        for module in ["SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse", "swift-record"] {
            let dir = PackagePaths.root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            XCTAssertFalse(files.isEmpty, "no sources in \(module)")
            for file in files {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                XCTAssertFalse(text.contains("errno == EINTR"),
                               "\(module)/\(file) retries EINTR by hand; use swift-system's FileDescriptor (retryOnInterrupt)")
            }
        }
    }
}
