import Foundation
import TestSupport
import XCTest

/// Every Swift block in README.md is compiled: it must appear, line for line (indentation
/// aside), in Examples/ReadmeSnippets, which `swift build --build-tests` builds.
final class ReadmeSnippetTests: XCTestCase {
    func testEveryReadmeSwiftBlockIsInTheCompiledSnippets() throws {
        let readme = try String(contentsOf: PackagePaths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let dir = PackagePaths.root.appendingPathComponent("Examples/ReadmeSnippets")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }
        let compiled = try files.map { name -> [String] in
            try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var blocks: [[String]] = []
        var current: [String]?
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.hasPrefix("```swift") { current = []; continue }
            if current != nil, line.hasPrefix("```") { blocks.append(current!); current = nil; continue }
            current?.append(line.trimmingCharacters(in: .whitespaces))
        }
        XCTAssertGreaterThanOrEqual(blocks.count, 2, "README's Swift blocks were not found")
        for block in blocks {
            let lines = block.filter { !$0.isEmpty }
            let imports = lines.filter { $0.hasPrefix("import ") }
            let body = lines.filter { !$0.hasPrefix("import ") }
            let found = compiled.contains { file in
                imports.allSatisfy(file.contains) && (body.isEmpty || (0...(max(0, file.count - body.count))).contains { start in
                    file.count >= body.count && Array(file[start..<(start + body.count)]) == body
                })
            }
            XCTAssertTrue(found, "README block not in Examples/ReadmeSnippets (copy it there, so it is compiled):\n" + block.joined(separator: "\n"))
        }
    }
}
