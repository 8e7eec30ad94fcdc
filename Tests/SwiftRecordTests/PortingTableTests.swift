import Foundation
import TestSupport
import XCTest

/// "Porting from AVFoundation" names every Apple counterpart the sources know of.
final class PortingTableTests: XCTestCase {
    static let article = PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/SwiftRecord.docc/PortingFromAVFoundation.md")
    /// FFmpeg's own names, which doc comments also write in backticks.
    static let ffmpegNames: Set<String> = ["AVFrame", "AVBufferPool", "AVOption", "AVCodecContext", "AVFormatContext", "AVERROR_EOF", "AVPacket", "AVCodec", "AVCodecParameters", "AV_NOPTS_VALUE", "AVERROR_EXIT", "AVIOContext", "AVRational"]

    /// The lines of every Swift file under Sources/`module`.
    static func sourceLines(_ module: String) throws -> [String] {
        let dir = PackagePaths.root.appendingPathComponent("Sources/\(module)")
        let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return try files.sorted().flatMap { file in
            try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8).split(separator: "\n").map(String.init)
        }
    }

    /// The article's table rows: every line that starts with `|`.
    static func tableRows() throws -> String {
        try String(contentsOf: article, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("|") }.joined(separator: "\n")
    }

    static func matches(_ pattern: String, in text: String, group: Int = 1) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { m in
            Range(m.range(at: group), in: text).map { String(text[$0]) }
        }
    }

    /// Apple's keys and constants, defined in Writer/Apple*.swift, each as a symbol link.
    func testEveryAppleConstantIsLinkedInThePortingTable() throws {
        let rows = try PortingTableTests.tableRows()
        let dir = PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/Writer")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("Apple") }
        var names: [String] = []
        for file in files {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            names += PortingTableTests.matches(#"(?m)^public (?:let|typealias) (\w+)"#, in: text)
        }
        XCTAssertGreaterThanOrEqual(names.count, 25, "Apple's constants were not found")
        for name in names {
            XCTAssertTrue(rows.contains("``\(name)``"), "PortingFromAVFoundation.md has no table row linking ``\(name)``")
        }
    }

    /// Every Apple API a doc comment names as a counterpart (`CMTimeAdd`, `AVAssetWriter.Status`,
    /// `kCVPixelBufferWidthKey`, …) has a row.
    func testEveryAppleNameTheSourcesMentionIsInThePortingTable() throws {
        let rows = try PortingTableTests.tableRows()
        let docs = try ["SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse"].flatMap(PortingTableTests.sourceLines)
            .filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("///") }.joined(separator: "\n")
        let pattern = #"`((?:AV|CM|CV|CA|RP|kCV|kAudio)[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?(?:\([A-Za-z:_]*\))?|AudioStreamBasicDescription|AudioChannelLayout)`"#
        let names = Set(PortingTableTests.matches(pattern, in: docs)).subtracting(PortingTableTests.ffmpegNames)
        XCTAssertGreaterThanOrEqual(names.count, 60, "the sources' Apple names were not found")
        for name in names.sorted() {
            XCTAssertTrue(rows.contains("`\(name)`"),
                          "a doc comment names `\(name)`, which no row of PortingFromAVFoundation.md's tables has (add one, or, for an FFmpeg name, add it to ffmpegNames)")
        }
    }

    /// Every type documented as "the counterpart of" an Apple type has a symbol link.
    func testEveryCounterpartTypeIsLinkedInThePortingTable() throws {
        let rows = try PortingTableTests.tableRows()
        let lines = try PortingTableTests.sourceLines("SwiftRecord")
        var pending = false
        var types: [String] = []
        for line in lines {
            if line.hasPrefix("///"), line.contains("counterpart of") { pending = true }
            if pending, !line.hasPrefix("///"), !line.hasPrefix("@") {
                types += PortingTableTests.matches(#"^public (?:final )?(?:class|struct|enum|protocol) (\w+)"#, in: line)
                pending = false
            }
        }
        XCTAssertGreaterThanOrEqual(types.count, 10, "the counterpart types were not found")
        for type in types {
            XCTAssertTrue(rows.contains("``\(type)``"), "\(type) is documented as an Apple counterpart; no row of PortingFromAVFoundation.md links ``\(type)``")
        }
    }
}
