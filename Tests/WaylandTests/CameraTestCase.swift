import Foundation
import TestSupport
import XCTest

/// What the camera test classes share: a private PipeWire with the tests' own camera
/// (swift-record-test-camera, Tests/TestCamera) and readers of the pictures it sends.
class CameraTestCase: WaylandTestCase {
    override var commonArguments: [String] { ["--audio", "none"] }
    static let camera = PackagePaths.product("swift-record-test-camera")

    /// A private PipeWire with the tests' camera `name` publishing `format` at `size` and `fps`.
    func pipeWireWithCamera(name: String = "sr-test-cam", size: String = "320x240", fps: Int = 30,
                            format: String = "yuy2", renegotiate: String? = nil) throws -> HeadlessGNOME {
        let desktop = try HeadlessGNOME(compositor: false)
        do {
            try desktop.start(CameraTestCase.camera, [name, size, String(fps), format] + (renegotiate.map { [$0] } ?? []))
            let producer = try XCTUnwrap(desktop.process(CameraTestCase.camera))
            try desktop.waitFor("the test camera") { producer.currentStdout().contains("ready") }
        } catch {
            desktop.stop()
            throw error
        }
        return desktop
    }

    /// The camera beside a microphone: a private PipeWire with the tests' camera and a
    /// private PulseAudio whose default sink plays a 1 kHz tone (its monitor the default
    /// source), all three stopped when the test ends.
    func cameraAndMicrophone() throws -> (desktop: HeadlessGNOME, pulse: PrivatePulseServer) {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio, pactl or pacat not installed")
        let desktop = try pipeWireWithCamera()
        addTeardownBlock { desktop.stop() }
        let pulse = try PrivatePulseServer()
        addTeardownBlock { pulse.stop() }
        let player = try pulse.playTone(writingTo: path("tone.raw"))
        addTeardownBlock { player.terminate() }
        return (desktop, pulse)
    }

    /// `environment` with a runtime directory of the test's own, empty, and no PipeWire
    /// remote: no PipeWire to be found.
    func withoutPipeWire(_ environment: [String: String]) throws -> [String: String] {
        let runtime = path("no-runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        var environment = environment
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["PIPEWIRE_REMOTE"] = nil
        return environment
    }

    /// The luma of every decoded frame of `file` (ffmpeg, gray), `width`x`height` each.
    func lumaFrames(_ file: String, width: Int, height: Int, stream: Int = 0) throws -> [[UInt8]] {
        let raw = path("frames.gray")
        let r = try Proc.run("ffmpeg", ["-v", "error", "-y", "-i", file, "-map", "0:v:\(stream)", "-vf", "format=gray", "-f", "rawvideo", raw])
        XCTAssertEqual(r.status, 0, r.stderr)
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        return stride(from: 0, to: data.count - width * height + 1, by: width * height).map { Array(data[$0..<($0 + width * height)]) }
    }

    /// The frame number the test camera wrote in its 8 blocks, read where its picture lies
    /// (corner `x`,`y`, scaled by `scale`).
    func frameNumber(_ frame: [UInt8], width: Int, x: Int = 0, y: Int = 0, scale: Double = 1) -> Int {
        (0..<8).reduce(0) { n, bit in
            let px = x + Int((Double(16 * bit) + 8) * scale), py = y + Int(8 * scale)
            return frame[py * width + px] > 128 ? n | (1 << bit) : n
        }
    }
}
