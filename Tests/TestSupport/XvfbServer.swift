import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private X server for one test class (or one test): `Xvfb -displayfd 1`, so the
/// server picks a free display number itself and tells it on its standard output: it
/// never collides with another server on the machine. Stopped with SIGTERM, then
/// SIGKILL if it does not exit within a few seconds; always waited for.
public final class XvfbServer: @unchecked Sendable {
    public let display: String
    private let process: ChildProcess
    private var stopped = false

    public static var isInstalled: Bool { Proc.which("Xvfb") != nil }

    /// Starts a server with one screen of `size` at `depth` bits; `extraArguments` such as
    /// `["-extension", "MIT-SHM"]` (disables shared memory).
    public init(size: String = "1280x720", depth: Int = 24, extraArguments: [String] = []) throws {
        let p = try Proc.spawn("Xvfb", ["-displayfd", "1", "-screen", "0", "\(size)x\(depth)", "-nolisten", "tcp", "-noreset"] + extraArguments)
        let deadline = Date().addingTimeInterval(20)
        var number: String?
        while Date() < deadline {
            let out = p.currentStdout()
            if out.hasSuffix("\n"), let n = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) {
                number = String(n)
                break
            }
            if kill(p.pid, 0) != 0 { break }
            usleep(20_000)
        }
        guard let number else {
            p.signal(SIGKILL)
            let r = p.wait(timeout: 5)
            throw TestError.failed("Xvfb did not start: \(r.stderr)")
        }
        process = p
        display = ":\(number)"
    }

    deinit { stop() }

    public var pid: pid_t { process.pid }

    /// SIGTERM, then SIGKILL after `grace` seconds; waits for the exit. Safe to call twice.
    public func stop(grace: Double = 3) {
        guard !stopped else { return }
        stopped = true
        process.signal(SIGTERM)
        process.wait(timeout: grace)
    }

    /// Kills the server at once (SIGKILL) and waits for it: the display "going away".
    public func kill9() {
        guard !stopped else { return }
        stopped = true
        process.signal(SIGKILL)
        process.wait(timeout: 5)
    }

    /// The environment for a child that should use this display.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = display
        return env
    }
}

