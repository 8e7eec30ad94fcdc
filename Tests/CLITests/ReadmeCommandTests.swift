import Foundation
import TestSupport
import XCTest

/// README.md's command lines are true (issue 43): every `swift-record` line of its shell
/// blocks names only options its subcommand's --help lists, and those that need no display,
/// camera or sound server (convert, trim, join, thumbnail, repair, verify) run as written, on inputs made
/// here under the names the README uses, and exit 0. The README stays a front door: at most
/// 250 lines.
final class ReadmeCommandTests: CLITestCase {
    static let subcommands: Set = ["convert", "trim", "join", "thumbnail", "verify", "repair"]

    /// The README's `swift-record` lines, comments cut, as words (a quoted word kept whole).
    func readmeCommands() throws -> [[String]] {
        let readme = try String(contentsOf: PackagePaths.root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(readme.split(separator: "\n", omittingEmptySubsequences: false).count, 251, "README.md is a front door")
        var inShell = false, shellLines: [String] = []
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") { inShell = !inShell && line == "```sh"; continue }
            if inShell { shellLines.append(line) }
        }
        return shellLines.compactMap { line in
            guard line.hasPrefix("swift-record") else { return nil }
            let command = line.components(separatedBy: " #").first ?? line
            var words: [String] = [], word = "", quoted = false
            for c in command {
                if c == "\"" { quoted.toggle() } else if c == " " && !quoted {
                    if !word.isEmpty { words.append(word); word = "" }
                } else { word.append(c) }
            }
            if !word.isEmpty { words.append(word) }
            return Array(words.dropFirst())
        }
    }

    func testEveryOptionInTheReadmeExists() throws {
        let commands = try readmeCommands()
        XCTAssertGreaterThanOrEqual(commands.count, 10, "the README's examples were not found")
        var helps: [String: String] = [:]
        for words in commands {
            let sub = words.first.flatMap { ReadmeCommandTests.subcommands.contains($0) ? $0 : nil } ?? "record"
            let help = try helps[sub] ?? Proc.run(binary, [sub, "--help"]).stdout
            helps[sub] = help
            for option in words where option.hasPrefix("--") || (option.hasPrefix("-") && option.count == 2) {
                XCTAssertTrue(help.contains(" \(option) ") || help.contains(" \(option),") || help.contains("\(option) <"),
                              "swift-record \(words.joined(separator: " ")): \(sub) --help has no \(option)")
            }
        }
    }

    func testTheCommandsThatNeedNoDisplayRunAsWritten() throws {
        // The inputs, under the README's names.
        func make(_ args: [String]) throws {
            let r = try Proc.run(binary, args + ["-q"], timeout: 120)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        }
        let here = dir.path
        try make(["--source", "synthetic", "--size", "320x240", "--frames", "30", "--audio", "synthetic", "-o", here + "/recording.mkv"])
        try make(["--source", "synthetic", "--size", "320x240", "--frames", "30", "-o", here + "/demo.mp4"])
        for part in ["part1.mp4", "part2.mp4"] {
            try make(["--source", "synthetic", "--size", "320x240", "--frames", "30", "--audio", "synthetic", "-o", here + "/" + part])
        }
        let yuv = try Proc.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30", "-frames:v", "5",
                                          "-pix_fmt", "yuv420p", "-f", "rawvideo", here + "/in.yuv"])
        XCTAssertTrue(yuv.succeeded, yuv.stderr)
        // A recording cut off by a kill, 1 s in.
        let log = here + "/cut.csv"
        let child = try spawnTracked(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "30", "--audio", "none",
                                      "--timing-log", log, "-q", "-o", here + "/cut-off.mp4"])
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 30), child.currentStderr())
        // The encoder may run a second behind the log on a busy machine: kill once a fragment
        // is in the file, so there is something for repair to keep (load 19 once had none).
        let fragmented = Date().addingTimeInterval(30)
        while Date() < fragmented,
              (try? Data(contentsOf: URL(fileURLWithPath: here + "/cut-off.mp4")))?.range(of: Data("moof".utf8)) == nil {
            usleep(50_000)
        }
        child.signal(SIGKILL)
        _ = child.wait(timeout: 10)
        let runnable = try readmeCommands().filter { ReadmeCommandTests.subcommands.contains($0.first ?? "") }
        XCTAssertEqual(Set(runnable.compactMap(\.first)), ReadmeCommandTests.subcommands)
        for words in runnable {
            let r = try Proc.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", here, binary] + words, timeout: 120)
            XCTAssertEqual(r.status, 0, "swift-record \(words.joined(separator: " ")): \(r.stderr)")
        }
        XCTAssertEqual(try FF.probe(here + "/web.webm").stream["codec_name"] as? String, "vp9")
        XCTAssertTrue(FileManager.default.fileExists(atPath: here + "/recording-sheet.png"))
        XCTAssertEqual(int(try FF.probe(here + "/in.mp4").stream["nb_read_frames"]), 5)
        XCTAssertEqual(int(try FF.probe(here + "/whole.mp4").stream["nb_read_frames"]), 60)
    }
}
