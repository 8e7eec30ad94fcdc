import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private PulseAudio server for one test class (or one test): its own runtime
/// directory, its socket at a path of ours (`unix:DIR/native`), anonymous access, a null
/// sink `test` (whose monitor is `test.monitor`). Never the user's session server.
/// Ready once `pactl info` answers on its socket; stopped by PID (SIGTERM, then SIGKILL),
/// always waited for.
public final class PrivatePulseServer: @unchecked Sendable {
    public let directory: URL
    public let socketPath: String
    public var address: String { "unix:\(socketPath)" }
    /// The environment for pactl/pacat: this server and nothing else.
    public let environment: [String: String]
    private let process: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    public static var isInstalled: Bool { ["pulseaudio", "pactl", "pacat"].allSatisfy { Proc.which($0) != nil } }

    public init() throws {
        directory = try makeTemporaryDirectory()
        chmod(directory.path, 0o700)
        socketPath = directory.appendingPathComponent("native").path
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = directory.path
        // Its cookie and state go to the test's directory, not the user's home.
        env["HOME"] = directory.path
        env["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        env["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        env["PULSE_SERVER"] = "unix:\(socketPath)"
        env.removeValue(forKey: "DISPLAY")
        environment = env
        process = try Proc.spawn("pulseaudio", [
            "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--system=no",
            "--realtime=no", "--high-priority=no", "--log-target=stderr",
            "--load=module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)",
            "--load=module-null-sink sink_name=test rate=48000 channels=2 sink_properties=device.description=TestSink",
        ], environment: env)
        let deadline = Date().addingTimeInterval(30)
        while true {
            if let exited = process.exited() {
                try? FileManager.default.removeItem(at: directory)
                throw TestError.failed("pulseaudio exited (\(exited.status)) before it was ready: \(exited.stderr)")
            }
            if let info = try? Proc.run("pactl", ["info"], environment: env, timeout: 10), info.succeeded { break }
            if Date() > deadline {
                stop()
                throw TestError.failed("pulseaudio did not answer `pactl info` within 30 s")
            }
            usleep(100_000)
        }
    }

    deinit { stop() }

    public var pid: pid_t { process.pid }

    @discardableResult
    public func pactl(_ arguments: [String]) throws -> ProcessResult {
        let r = try Proc.run("pactl", arguments, environment: environment, timeout: 30)
        guard r.succeeded else { throw TestError.failed("pactl \(arguments.joined(separator: " ")) failed: \(r.stderr)") }
        return r
    }

    /// Plays raw s16le 48 kHz stereo from `path` into the sink `test`, with the 20 ms of
    /// latency a real-time player asks for (pacat's default, 2 s, lets the null sink render
    /// in blocks that long, so a monitor stream opened meanwhile gets its first sound only
    /// at the next block).
    public func play(_ path: String, into sink: String = "test") throws -> ChildProcess {
        try Proc.spawn("pacat", ["--playback", "--device=\(sink)", "--format=s16le", "--rate=48000", "--channels=2", "--latency-msec=20"],
                       stdinPath: path, environment: environment)
    }

    /// Plays 30 s of a `frequency` Hz tone (written to `path`) into `sink`, then waits
    /// `settle` seconds before returning the player: an idle null sink sleeps in long blocks
    /// and hands its monitor the first sound up to a second late.
    public func playTone(_ frequency: Double = 1000, into sink: String = "test", writingTo path: String,
                         settle: Double = 1.5) throws -> ChildProcess {
        try writeTone(to: path, seconds: 30, frequency: frequency)
        let player = try play(path, into: sink)
        if settle > 0 { Thread.sleep(forTimeInterval: settle) }
        return player
    }

    /// A desktop and a microphone for screen-capture tests: the sink `test` (the default
    /// sink) playing 1 kHz, a sink `mic` playing 440 Hz whose monitor is the default source;
    /// the tones are written into `directory`. Returns the two players (stop them, or hand
    /// them to the test's `track`).
    public func playDesktopAndMicrophoneTones(in directory: String) throws -> [ChildProcess] {
        try pactl(["load-module", "module-null-sink", "sink_name=mic", "rate=48000", "channels=2"])
        try pactl(["set-default-sink", "test"])
        try pactl(["set-default-source", "mic.monitor"])
        return [try playTone(1000, into: "test", writingTo: directory + "/tone-1000.raw", settle: 0),
                try playTone(440, into: "mic", writingTo: directory + "/tone-440.raw", settle: 1)]
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; waits for the exit; removes the directory. Safe to call twice.
    public func stop(grace: Double = 5) {
        guard lock.withLock({ let was = stopped; stopped = true; return !was }) else { return }
        process.signal(SIGTERM)
        process.wait(timeout: grace)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the server at once (SIGKILL) and waits for it: the server "going away".
    public func kill9() {
        guard lock.withLock({ let was = stopped; stopped = true; return !was }) else { return }
        process.signal(SIGKILL)
        process.wait(timeout: 10)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A 1 kHz tone, s16le stereo at 48 kHz, amplitude one half, `seconds` long.
public func writeTone(to path: String, seconds: Double, frequency: Double = 1000) throws {
    let frames = Int(seconds * 48_000)
    var samples = [Int16](repeating: 0, count: frames * 2)
    for i in 0..<frames {
        let v = Int16(16_384 * sin(2 * Double.pi * frequency * Double(i) / 48_000))
        samples[2 * i] = v
        samples[2 * i + 1] = v
    }
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
}
