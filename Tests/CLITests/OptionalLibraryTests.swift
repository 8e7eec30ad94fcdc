import Foundation
import TestSupport
import XCTest

/// libpulse, libpipewire-0.3, libsystemd (sd-bus), libXdamage, libXrandr and libavdevice are
/// not linked into the binary but opened when a source first needs them
/// (docs/ARCHITECTURE.md): `ldd` lists none of them, and with them made unloadable (each
/// bind-mounted over by /dev/null in a mount namespace of the test's own, `unshare -rm`)
/// everything else still records and converts, while a source that needs one fails saying
/// which library and which package (X11's are checked in X11Tests, which has an X server).
final class OptionalLibraryTests: CLITestCase {
    static let opened = ["libpulse.so.0", "libpipewire-0.3.so.0", "libsystemd.so.0", "libXdamage.so.1", "libXrandr.so.2", "libavdevice.so"]

    func testTheBinaryLinksNoneOfThem() throws {
        let r = try Proc.run("ldd", [binary], timeout: 60)
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stdout.contains("libavformat.so"), r.stdout)
        for library in OptionalLibraryTests.opened {
            XCTAssertFalse(r.stdout.contains(library), "\(library) is linked:\n\(r.stdout)")
        }
    }

    func testWithoutThemOnlyTheSourcesThatNeedThemFail() throws {
        let hidden = try HiddenLibraries(Array(OptionalLibraryTests.opened.dropLast()))
        func run(_ arguments: [String]) throws -> ProcessResult { try hidden.run(binary, arguments) }

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
}
