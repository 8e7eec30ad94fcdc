import Foundation
import TestSupport
import XCTest

/// libpulse, libpipewire-0.3, libsystemd (sd-bus) and libavdevice are not linked into the
/// binary but opened when a source first needs them (docs/ARCHITECTURE.md): `ldd` lists
/// none of them, and with them made unloadable (each bind-mounted over by /dev/null in a
/// mount namespace of the test's own, `unshare -rm`) everything else still records and
/// converts, while a source that needs one fails saying which library and which package.
final class OptionalLibraryTests: CLITestCase {
    static let opened = ["libpulse.so.0", "libpipewire-0.3.so.0", "libsystemd.so.0", "libavdevice.so"]

    func testTheBinaryLinksNoneOfThem() throws {
        let r = try Proc.run("ldd", [binary], timeout: 60)
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stdout.contains("libavformat.so"), r.stdout)
        for library in OptionalLibraryTests.opened {
            XCTAssertFalse(r.stdout.contains(library), "\(library) is linked:\n\(r.stdout)")
        }
    }

    func testWithoutThemOnlyTheSourcesThatNeedThemFail() throws {
        let hidden = try OptionalLibraryTests.files(of: ["libpulse.so.0", "libpipewire-0.3.so.0", "libsystemd.so.0"])
        try XCTSkipUnless(try Proc.run("unshare", ["-rm", "true"], timeout: 30).succeeded,
                          "no user and mount namespaces here (unshare -rm): cannot hide a library from one process")
        // Runs the binary with `hidden` unloadable: dlopen reads /dev/null ("file too short").
        func run(_ arguments: [String]) throws -> ProcessResult {
            let script = "for f in \(hidden.map { "'\($0)'" }.joined(separator: " ")); do mount --bind /dev/null \"$f\" || exit 99; done; exec \"$@\""
            let r = try Proc.run("unshare", ["-rm", "sh", "-c", script, "sh", binary] + arguments, timeout: 120)
            XCTAssertNotEqual(r.status, 99, "could not hide the libraries: \(r.stderr)")
            return r
        }

        XCTAssertTrue(try run(["--help"]).stdout.contains("USAGE"))
        let recorded = path("scene.mp4")
        let scene = try run(["--source", "synthetic", "--size", "160x120", "--frames", "5", "--audio", "none", "-q", "-o", recorded])
        XCTAssertEqual(scene.status, 0, scene.stderr)
        XCTAssertEqual(int(try FF.probe(recorded).stream["nb_read_frames"]), 5)
        let raw = path("in.yuv")
        try Data(repeating: 128, count: 64 * 48 * 3 / 2 * 2).write(to: URL(fileURLWithPath: raw))
        let converted = try run(["convert", raw, "--size", "64x48", "-q", "-o", path("in.mp4")])
        XCTAssertEqual(converted.status, 0, converted.stderr)
        XCTAssertEqual(int(try FF.probe(path("in.mp4")).stream["nb_read_frames"]), 2)

        assertRefused(try run(["--source", "synthetic", "--size", "160x120", "--frames", "5", "--audio", "pulse", "-o", path("pulse.mp4")]),
                      says: ["cannot load libpulse.so.0", "PulseAudio", "libpulse0"], "--audio pulse without libpulse")
        assertRefused(try run(["--source", "camera", "--camera", "no-such-node", "--duration", "1", "-o", path("camera.mp4")]),
                      says: ["cannot load libpipewire-0.3.so.0", "libpipewire-0.3-0"], "a PipeWire camera without libpipewire")
        assertRefused(try run(["--source", "wayland", "--duration", "1", "-o", path("wayland.mp4")]),
                      says: ["cannot load libsystemd.so.0", "sd-bus", "libsystemd0"], "a Wayland screen cast without libsystemd")
    }

    /// Where the dynamic loader finds each of `names` (`ldconfig -p`), every architecture's.
    static func files(of names: [String]) throws -> [String] {
        let ldconfig = ["/sbin/ldconfig", "/usr/sbin/ldconfig"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ldconfig"
        let listing = try Proc.run(ldconfig, ["-p"], timeout: 30).stdout
        let files = names.map { name in
            listing.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + " (") }
                .compactMap { line in line.components(separatedBy: " => ").last }
        }
        for (name, found) in zip(names, files) where found.isEmpty {
            throw XCTSkip("\(name) is not installed (scripts/install-deps.sh installs it)")
        }
        return files.flatMap { $0 }
    }
}
