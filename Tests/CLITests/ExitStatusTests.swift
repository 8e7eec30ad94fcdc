import Foundation
import TestSupport
import XCTest

/// One exit-status table for every subcommand (README, "Exit status"): 0 done, 1 could not
/// be done (or not completely), 2 refused before writing, 64 usage, 130 convert interrupted
/// (HostileInputTests covers 130).
final class ExitStatusTests: CLITestCase {

    func status(_ args: [String]) throws -> ProcessResult {
        let r = try Proc.run(binary, args, timeout: 60)
        XCTAssertFalse(r.timedOut, "\(args) hung")
        return r
    }

    func testTheTableHoldsForEverySubcommand() throws {
        let file = dir.appendingPathComponent("ok.mp4").path
        let raw = dir.appendingPathComponent("in.yuv").path
        try Data(repeating: 128, count: 64 * 48 * 3 / 2 * 3).write(to: URL(fileURLWithPath: raw))
        let converted = dir.appendingPathComponent("in.mp4").path
        let text = dir.appendingPathComponent("notes.txt").path
        try Data("not a recording".utf8).write(to: URL(fileURLWithPath: text))

        // 0: done.
        XCTAssertEqual(try status(["--source", "synthetic", "--frames", "5", "--size", "64x48", "-q", "-o", file]).status, 0)
        XCTAssertEqual(try status(["convert", raw, "--size", "64x48", "-q", "-o", converted]).status, 0)
        XCTAssertEqual(try status(["verify", file]).status, 0)

        // 2: refused before anything was written; the existing file left alone.
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        for args in [["--source", "synthetic", "--frames", "5", "--size", "64x48", "-q", "-o", file],
                     ["convert", raw, "--size", "64x48", "-q", "-o", file],
                     ["repair", converted, "-o", file],
                     ["--source", "synthetic", "--frames", "5", "-q", "--timing-log", "/dev/null", "-o", dir.appendingPathComponent("n.mp4").path],
                     ["verify", text]] {
            let r = try status(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), before)

        // 1: could not be done: no X server at that display.
        let noServer = try status(["--source", "x11", "--display", ":97", "--frames", "5", "-q", "-o", dir.appendingPathComponent("x.mp4").path])
        XCTAssertEqual(noServer.status, 1, noServer.stderr)

        // 64: usage, for every subcommand.
        for args in [["--no-such-option"], ["convert", raw, "--no-such-option"], ["repair", file, "--no-such-option"],
                     ["verify", file, "--no-such-option"], ["--fps", "fast"]] {
            let r = try status(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
        }
    }
}
