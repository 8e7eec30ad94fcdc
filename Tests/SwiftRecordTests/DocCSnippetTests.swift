import Foundation
import TestSupport
import XCTest

/// The DocC catalogue (Sources/SwiftRecord/SwiftRecord.docc) cannot rot: every Swift block
/// of its pages is compiled, in Examples/DocSnippets (Apple's code in Examples/AppleSnippets). (`make test` also builds the
/// catalogue with warnings as errors, which catches a broken symbol link.)
final class DocCSnippetTests: XCTestCase {
    static let catalogue = PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/SwiftRecord.docc")

    /// The Markdown pages of the catalogue, by file name.
    static func pages() throws -> [(name: String, text: String)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: catalogue.path).filter { $0.hasSuffix(".md") }.sorted()
        return try names.map { ($0, try String(contentsOf: catalogue.appendingPathComponent($0), encoding: .utf8)) }
    }

    func testEveryArticleSwiftBlockIsInTheCompiledSnippets() throws {
        // Apple's code as written (`import AVFoundation`) is compiled in Examples/AppleSnippets.
        let compiled = try DocumentationSnippets.compiledFiles(in: PackagePaths.root.appendingPathComponent("Examples/DocSnippets"))
            + DocumentationSnippets.compiledFiles(in: PackagePaths.root.appendingPathComponent("Examples/AppleSnippets"))
        let pages = try DocCSnippetTests.pages()
        XCTAssertEqual(pages.map(\.name), ["CapturingWithScreenCaptureKit.md", "CommandLine.md", "ConvertingRawVideo.md", "NothingIsLost.md", "PassThroughAndRemuxing.md",
                                           "PortingFromAVFoundation.md", "ReadingMedia.md", "RecordingACamera.md", "RecordingAWaylandScreen.md", "RecordingAnotherProcess.md",
                                           "RecordingSound.md", "RecordingTheScreen.md", "StreamingAndReplay.md", "SwiftRecord.md", "TrimmingAndJoining.md",
                                           "WritingFiles.md"],
                       "the catalogue's pages changed: update this list")
        // The articles about the command line show shell lines only.
        let commandLineOnly: Set = ["CommandLine.md", "NothingIsLost.md", "RecordingSound.md", "StreamingAndReplay.md"]
        for page in pages {
            let blocks = DocumentationSnippets.blocks(in: page.text).filter { $0.language == "swift" }
            XCTAssertEqual(blocks.isEmpty, commandLineOnly.contains(page.name), "\(page.name): Swift blocks where none were expected, or none")
            for block in blocks {
                XCTAssertTrue(DocumentationSnippets.isCompiled(block, in: compiled),
                              "\(page.name): block not in Examples/DocSnippets (copy it there, so it is compiled):\n" + block.text)
            }
        }
    }

    /// A block without a language would escape the check above, Swift or not.
    func testEveryArticleCodeBlockNamesItsLanguage() throws {
        for page in try DocCSnippetTests.pages() {
            for block in DocumentationSnippets.blocks(in: page.text) {
                XCTAssertTrue(["swift", "sh"].contains(block.language),
                              "\(page.name): a code block fenced as '\(block.language)'; use ```swift (compiled) or ```sh:\n" + block.text)
            }
        }
    }
}
