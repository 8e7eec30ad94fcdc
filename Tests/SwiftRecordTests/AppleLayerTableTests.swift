import Foundation
import TestSupport
import XCTest

/// "Porting from AVFoundation" lists every name the AVFoundation, CoreMedia, CoreVideo and
/// ReplayKit modules offer ("Capturing with ScreenCaptureKit's names" ScreenCaptureKit's), each "as written" or "differs: why", and Examples/AppleSnippets compiles
/// a snippet for each row (`// row: NAME` above it).
final class AppleLayerTableTests: XCTestCase {
    static let modules = ["AVFoundation", "CoreMedia", "CoreVideo", "ReplayKit", "ScreenCaptureKit"]

    /// The rows of the tables whose second column is "As written?": name → verdict.
    static func layerRows() throws -> [String: String] {
        // ScreenCaptureKit's table has an article of its own.
        let screenCapture = PortingTableTests.article.deletingLastPathComponent().appendingPathComponent("CapturingWithScreenCaptureKit.md")
        let text = try [PortingTableTests.article, screenCapture].map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n\n")
        var rows: [String: String] = [:]
        var inLayerTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            guard line.hasPrefix("|") else { inLayerTable = false; continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            if cells[2] == "As written?" { inLayerTable = true; continue }
            guard inLayerTable, cells[1].hasPrefix("`"), let name = cells[1].split(separator: "`").first else { continue }
            rows[String(name)] = cells[2]
        }
        return rows
    }

    /// The public names of the modules: top-level ones, and `Type.member` for the members of
    /// their classes, of their protocols' extensions, of the classes nested in them or in
    /// extensions of Apple's types (`AVAssetWriterInput.PixelBufferReceiver.finish`), of the
    /// extensions of Apple's types (`AVAssetWriter.inputReceiver`) and of `CMSampleBuffer` (an
    /// `extension MediaSample`).
    static func publicNames() throws -> Set<String> {
        var names = Set<String>()
        for module in modules {
            for line in try PortingTableTests.sourceLines(module) {
                names.formUnion(PortingTableTests.matches(#"^public (?:final class|class|protocol|struct|enum|func|let|var|typealias) (\w+)"#, in: line))
            }
            var owner: String?, nested: String?
            for line in try PortingTableTests.sourceLines(module) {
                // A declaration at the left margin ends the one before: a class, a protocol or an
                // extension of an Apple name owns what follows; anything else owns nothing.
                if line.range(of: #"^(?:public )?(?:final )?(?:class|protocol|struct|enum|extension) "#, options: .regularExpression) != nil {
                    owner = PortingTableTests.matches(#"^(?:public (?:final )?class|public protocol|extension) ((?:AV|CM|CV|RP|SC)\w+)"#, in: line).first
                    nested = nil
                    if line.hasPrefix("extension MediaSample") { owner = "CMSampleBuffer" }
                }
                // A class nested in an owner owns the members indented one level more.
                if let owner, let type = PortingTableTests.matches(#"^    public (?:final )?class (?!func |var )(\w+)"#, in: line).first {
                    let name = "\(owner).\(type)"
                    nested = name
                    names.insert(name)
                }
                if let nested {
                    for member in PortingTableTests.matches(#"^        public (?:func|var|let) (\w+)"#, in: line) { names.insert("\(nested).\(member)") }
                    if line.range(of: #"^        public (?:convenience )?init\("#, options: .regularExpression) != nil { names.insert("\(nested).init") }
                }
                guard let owner else { continue }
                for member in PortingTableTests.matches(#"^    public (?:class func|func|var|let|typealias) (\w+)"#, in: line) { names.insert("\(owner).\(member)") }
                if line.range(of: #"^    public (?:convenience )?init\("#, options: .regularExpression) != nil { names.insert("\(owner).init") }
            }
        }
        return names
    }

    /// `// row: NAME` markers and the code after each, from Examples/AppleSnippets.
    static func snippets() throws -> [String: String] {
        let dir = PackagePaths.root.appendingPathComponent("Examples/AppleSnippets")
        var found: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            let blocks = text.components(separatedBy: "\n\n")
            for block in blocks {
                let lines = block.split(separator: "\n").map(String.init)
                let code = lines.filter { !$0.hasPrefix("// row: ") }.joined(separator: "\n")
                for line in lines where line.hasPrefix("// row: ") { found[String(line.dropFirst(8))] = code }
            }
        }
        return found
    }

    func testEveryPublicNameOfTheLayerHasARow() throws {
        let rows = try Self.layerRows()
        let names = try Self.publicNames()
        XCTAssertGreaterThan(names.count, 100, "the layer's names were not found")
        for name in names.sorted() {
            XCTAssertTrue(rows.keys.contains { $0 == name || $0.hasPrefix(name + "(") },
                          "\(name) is public in the Apple-spelled modules but has no row in PortingFromAVFoundation.md's \"As written?\" tables")
        }
    }

    func testEveryRowSaysAsWrittenOrHowItDiffers() throws {
        let rows = try Self.layerRows()
        XCTAssertGreaterThan(rows.count, 100)
        for (name, verdict) in rows.sorted(by: { $0.key < $1.key }) {
            XCTAssertTrue(verdict == "as written" || (verdict.hasPrefix("differs: ") && verdict.count > 20),
                          "\(name): \"\(verdict)\" is neither \"as written\" nor \"differs: why\"")
        }
    }

    func testEveryRowHasACompiledSnippetThatUsesIt() throws {
        let rows = try Self.layerRows()
        let snippets = try Self.snippets()
        for name in rows.keys.sorted() {
            guard let code = snippets[name] else {
                XCTFail("\(name) has no snippet in Examples/AppleSnippets (a `// row: \(name)` line above one)")
                continue
            }
            // The snippet uses the name: its last part ("startWriting", "CMTimeMake"), or the type for an initialiser.
            var word = name.split(separator: "(").first.map(String.init) ?? name
            word = word.hasSuffix(".init") ? String(word.dropLast(5)) : (word.split(separator: ".").last.map(String.init) ?? word)
            XCTAssertTrue(code.contains(word), "the snippet of \(name) does not use \(word):\n\(code)")
        }
        for name in snippets.keys where rows[name] == nil {
            XCTFail("Examples/AppleSnippets has a snippet for \(name), which no row lists")
        }
    }
}
