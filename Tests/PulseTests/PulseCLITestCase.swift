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
        track(try server.playTone(440, into: "test", writingTo: path("tone-440.raw"), settle: 0))
        // An idle null sink sleeps in long blocks: let both wake before recording.
        otherPlayer = track(try server.playTone(1000, into: "other", writingTo: path("tone-1000.raw"), settle: 1))
    }
}
