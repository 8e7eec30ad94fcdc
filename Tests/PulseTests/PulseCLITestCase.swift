import Foundation
import TestSupport
import XCTest

/// Base of the tests that run the built `swift-record` against a private PulseAudio server
/// of their own (one per test: some take a sink away): the recorder sees the server only
/// through `PULSE_SERVER` in its own environment; teardown stops every child (MediaTestCase)
/// and the server.
class PulseCLITestCase: MediaTestCase {
    var server: PrivatePulseServer!

    override func setUpWithError() throws {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio/pactl/pacat not installed; run scripts/install-deps.sh")
        try super.setUpWithError()
        server = try PrivatePulseServer()
    }

    override func tearDownWithError() throws {
        stopChildren()
        server?.stop()
        try super.tearDownWithError()
    }

    /// Starts `swift-record` pointed at this test's server; teardown stops it if the test does not.
    func spawn(_ arguments: [String]) throws -> ChildProcess {
        try spawnTracked(arguments, environment: server.environment)
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
