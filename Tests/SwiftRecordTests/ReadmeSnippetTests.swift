import Foundation
import TestSupport
import XCTest

/// Every Swift block in README.md is compiled: it must appear, line for line (indentation
/// aside), in Examples/ReadmeSnippets, which `swift build --build-tests` builds.
final class ReadmeSnippetTests: XCTestCase {
    func testEveryReadmeSwiftBlockIsInTheCompiledSnippets() throws {
        let readme = try String(contentsOf: PackagePaths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try DocumentationSnippets.compiledFiles(in: PackagePaths.root.appendingPathComponent("Examples/ReadmeSnippets"))
        let blocks = DocumentationSnippets.blocks(in: readme).filter { $0.language == "swift" }
        XCTAssertGreaterThanOrEqual(blocks.count, 1, "README's Swift block was not found")
        for block in blocks {
            XCTAssertTrue(DocumentationSnippets.isCompiled(block, in: compiled),
                          "README block not in Examples/ReadmeSnippets (copy it there, so it is compiled):\n" + block.text)
        }
    }
}
