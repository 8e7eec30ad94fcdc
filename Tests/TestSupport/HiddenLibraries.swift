import Foundation
import XCTest

/// Runs a program with some shared libraries made unloadable, to check what a machine
/// without them does: each file is bind-mounted over by /dev/null in a user and mount
/// namespace of the run's own (`unshare -rm`), so `dlopen` fails ("file too short") for that
/// process alone. Skips the test where namespaces or a library are missing.
public struct HiddenLibraries {
    /// The files hidden: every architecture's copy the dynamic loader knows (`ldconfig -p`).
    public let files: [String]

    /// `names` as the loader asks for them, e.g. "libpulse.so.0".
    public init(_ names: [String]) throws {
        try XCTSkipUnless(try Proc.run("unshare", ["-rm", "true"], timeout: 30).succeeded,
                          "no user and mount namespaces here (unshare -rm): cannot hide a library from one process")
        let ldconfig = ["/sbin/ldconfig", "/usr/sbin/ldconfig"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ldconfig"
        let listing = try Proc.run(ldconfig, ["-p"], timeout: 30).stdout.split(separator: "\n")
        var files: [String] = []
        for name in names {
            let found = listing.filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + " (") }
                .compactMap { line in line.components(separatedBy: " => ").last }
            if found.isEmpty { throw XCTSkip("\(name) is not installed (scripts/install-deps.sh installs it)") }
            files += found
        }
        self.files = files
    }

    /// `executable` with `arguments` and the libraries hidden; exit status 99 when they could
    /// not be (the test fails then).
    public func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: Double = 120, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let script = "for f in \(files.map { "'\($0)'" }.joined(separator: " ")); do mount --bind /dev/null \"$f\" || exit 99; done; exec \"$@\""
        let r = try Proc.run("unshare", ["-rm", "sh", "-c", script, "sh", executable] + arguments, environment: environment, timeout: timeout)
        XCTAssertNotEqual(r.status, 99, "could not hide \(files): \(r.stderr)", file: file, line: line)
        return r
    }
}
