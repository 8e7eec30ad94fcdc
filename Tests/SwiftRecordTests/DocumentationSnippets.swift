import Foundation

/// Finds the fenced code blocks of a Markdown file and checks that each Swift one is in
/// the compiled snippet files, so documentation cannot show code that does not build.
enum DocumentationSnippets {
    /// A fenced block: its language (empty when none is given) and its lines, trimmed.
    struct Block {
        let language: String
        let lines: [String]
        var text: String { lines.joined(separator: "\n") }
    }

    /// Every fenced (```) block of `markdown`, in order.
    static func blocks(in markdown: String) -> [Block] {
        var blocks: [Block] = []
        var current: (language: String, lines: [String])?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed.hasPrefix("```") {
                current = (String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
            } else if let block = current, trimmed.hasPrefix("```") {
                blocks.append(Block(language: block.language, lines: block.lines))
                current = nil
            } else {
                current?.lines.append(trimmed)
            }
        }
        return blocks
    }

    /// The non-empty lines, trimmed, of every `.swift` file in `directory`.
    static func compiledFiles(in directory: URL) throws -> [[String]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        return try names.map { name in
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    /// Whether one of `files` has the block's imports and its other lines one after another
    /// (indentation and blank lines aside).
    static func isCompiled(_ block: Block, in files: [[String]]) -> Bool {
        let lines = block.lines.filter { !$0.isEmpty }
        let imports = lines.filter { $0.hasPrefix("import ") }
        let body = lines.filter { !$0.hasPrefix("import ") }
        return files.contains { file in
            guard imports.allSatisfy(file.contains) else { return false }
            guard !body.isEmpty else { return true }
            guard file.count >= body.count else { return false }
            return (0...(file.count - body.count)).contains { start in Array(file[start..<(start + body.count)]) == body }
        }
    }
}
