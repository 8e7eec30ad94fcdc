import Foundation
import TestSupport
import XCTest

/// Base of the tests that run the built `swift-record` against a private PulseAudio server
/// of their own (one per test: some take a sink away): the recorder sees the server only
/// through `PULSE_SERVER` in its own environment; teardown stops every child and the server.
class PulseCLITestCase: XCTestCase {
    var server: PrivatePulseServer!
    var dir: URL!
    let binary = PackagePaths.product("swift-record")
    private var children: [ChildProcess] = []

    override func setUpWithError() throws {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio/pactl/pacat not installed; run scripts/install-deps.sh")
        try XCTSkipUnless(FF.available, "ffmpeg/ffprobe not installed; run scripts/install-deps.sh")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestError.failed("\(binary) is not built; run `swift build` first (make test does)")
        }
        dir = try makeTemporaryDirectory()
        server = try PrivatePulseServer()
    }

    override func tearDown() {
        for child in children { child.terminate() }
        server?.stop()
        if let dir { try? FileManager.default.removeItem(at: dir) }
        super.tearDown()
    }

    /// Starts `swift-record` pointed at this test's server; teardown stops it if the test does not.
    func spawn(_ arguments: [String]) throws -> ChildProcess {
        let child = try Proc.spawn(binary, arguments, environment: server.environment)
        children.append(child)
        return child
    }

    /// Keeps `child` (a player) to be stopped at teardown.
    func track(_ child: ChildProcess) {
        children.append(child)
    }
}

/// A private server with two null sinks, `test` playing 440 Hz and `other` 1000 Hz (`pacat`
/// from a 30-s tone each), both awake: what the several-sources and mix tests record.
class TwoTonesTestCase: PulseCLITestCase {
    /// The player of the second sink's tone.
    var otherPlayer: ChildProcess?

    override func setUpWithError() throws {
        try super.setUpWithError()
        try server.pactl(["load-module", "module-null-sink", "sink_name=other", "rate=48000", "channels=2"])
        _ = try play(frequency: 440, into: "test")
        otherPlayer = try play(frequency: 1000, into: "other")
        // An idle null sink sleeps in long blocks: let both wake before recording.
        Thread.sleep(forTimeInterval: 1)
    }

    private func play(frequency: Double, into sink: String) throws -> ChildProcess {
        let tone = dir.appendingPathComponent("tone-\(Int(frequency)).raw").path
        try writeTone(to: tone, seconds: 30, frequency: frequency)
        let player = try Proc.spawn("pacat", ["--playback", "--device=\(sink)", "--format=s16le", "--rate=48000", "--channels=2", "--latency-msec=20"],
                                    stdinPath: tone, environment: server.environment)
        track(player)
        return player
    }
}
