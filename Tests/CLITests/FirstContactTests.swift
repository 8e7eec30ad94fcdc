import Foundation
import TestSupport
import XCTest

/// What a newcomer meets first: `--version`, `--help` with the default subcommand's options,
/// help text wrapped by argument-parser, and messages through the logging levels.
final class FirstContactTests: CLITestCase {

    func testVersionNamesTheReleaseAndTheFFmpegLibraries() throws {
        let r = try Proc.run(binary, ["--version"], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("swift-record 0."), r.stdout)
        XCTAssertTrue(r.stdout.contains("libavcodec "), r.stdout)
    }

    func testHelpShowsTheRecordOptionsAndTheOtherSubcommands() throws {
        for flag in ["--help", "-h", "help"] {
            let r = try Proc.run(binary, [flag], timeout: 30)
            XCTAssertEqual(r.status, 0, r.stderr)
            for text in ["SUBCOMMANDS:", "convert", "repair", "verify", "--fps", "--bitrate", "--audio", "--duration", "--log-level", "--version"] {
                XCTAssertTrue(r.stdout.contains(text), "\(flag): '\(text)' missing")
            }
            // argument-parser wraps: no line past 80 columns, and no paragraph broken into a
            // stub line of one or two words (what re-wrapping hand-wrapped prose gave).
            for line in r.stdout.split(separator: "\n") {
                XCTAssertLessThanOrEqual(line.count, 80, "\(flag): too long: \(line)")
            }
            XCTAssertFalse(r.stdout.contains("in\nevery\n"), r.stdout)
        }
    }

    func testLogLevelsShowFFmpegsMessagesOnlyWhenAsked() throws {
        let out = dir.appendingPathComponent("l.mp4").path
        let quiet = try Proc.run(binary, ["--source", "synthetic", "--frames", "10", "--size", "64x64", "--quiet", "-o", out], timeout: 60)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertFalse(quiet.stderr.contains("[libx264 @"), "info lines shown by default: \(quiet.stderr)")
        let info = try Proc.run(binary, ["--source", "synthetic", "--frames", "10", "--size", "64x64", "--quiet", "-y", "--log-level", "info", "-o", out],
                                timeout: 60)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stderr.contains("swift-record: info: [libx264 @"), info.stderr)
        let verbose = try Proc.run(binary, ["--source", "synthetic", "--frames", "10", "--size", "64x64", "--quiet", "-y", "-v", "-o", out], timeout: 60)
        XCTAssertTrue(verbose.stderr.contains("[libx264 @"), verbose.stderr)
        let bad = try Proc.run(binary, ["--source", "synthetic", "--frames", "10", "--log-level", "loud", "-o", out], timeout: 60)
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--log-level"), bad.stderr)
    }

    /// FFmpeg's warnings are shown by default, so an ordinary recording must not cause any:
    /// (the fragmented MP4 muxer used to warn about its edit list and a negative first DTS).
    func testAnOrdinaryRecordingCausesNoFFmpegWarnings() throws {
        for (name, extra) in [("w.mp4", ["--audio", "synthetic"]), ("w.mov", ["--audio", "synthetic"]), ("w.mkv", ["--audio", "synthetic"]),
                              ("w2.mp4", [String]()), ("w.webm", ["--codec", "vp9", "--audio", "synthetic"])] {
            let out = dir.appendingPathComponent(name).path
            let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "30", "--size", "160x120", "--quiet", "-o", out] + extra, timeout: 120)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("warning:"), "\(name): \(r.stderr)")
        }
    }

    func testStatsJSONCarriesTheVersion() throws {
        let json = dir.appendingPathComponent("s.json").path
        let r = try Proc.run(binary, ["--source", "synthetic", "--frames", "5", "--size", "64x64", "--quiet", "--stats-json", json,
                                      "-o", dir.appendingPathComponent("v.mp4").path], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        XCTAssertEqual((object["version"] as? String)?.hasPrefix("0."), true)
    }
}
