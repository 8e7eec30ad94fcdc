import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs helper programs (ffprobe, ffmpeg, Xvfb, the built swift-record) for tests.
///
/// Uses posix_spawn with an emptied signal mask and default handlers: a child started
/// from a Swift thread would otherwise inherit blocked signals, ignore SIGTERM, and hang
/// the test. Every child has a deadline and is killed when it passes.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public let timedOut: Bool
    public var succeeded: Bool { status == 0 && !timedOut }
}

public enum TestError: Error, CustomStringConvertible {
    case failed(String)
    public var description: String {
        switch self { case .failed(let s): return s }
    }
}

/// A running child process.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    let stdoutPath: String
    let stderrPath: String
    private let lock = NSLock()
    private var exitStatus: Int32?
    /// The result, once collected: later waits return it again.
    private var finished: ProcessResult?

    init(pid: pid_t, stdoutPath: String, stderrPath: String) {
        self.pid = pid
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    /// Sends `sig` unless the child was already reaped (its pid may belong to another process by then).
    public func signal(_ sig: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(pid, sig) }
    }

    /// Stops the child (SIGSTOP) and returns once all its threads have stopped, as waitpid
    /// with WUNTRACED reports it; false if it exited first or did not stop within `timeout`.
    /// kill() only queues the signal: until the stop is reported, a thread of the child may
    /// still be inside a write (a copy taken then could hold half of it).
    public func stop(timeout: Double = 10) -> Bool {
        signal(SIGSTOP)
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            var status: Int32 = 0
            if reap(&status, flags: WNOHANG | WUNTRACED) { return false }
            if Self.isStopped(status) { return true }
            usleep(1_000)
        } while Date() < deadline
        return false
    }

    /// A waitpid status (WUNTRACED) that reports a stop, not an exit.
    private static func isStopped(_ status: Int32) -> Bool { (status & 0xff) == 0x7f }

    /// The exit code of a waitpid status: the code, or 128 + the signal that ended it.
    private static func code(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// True once `wait` has collected the child.
    public var isReaped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return exitStatus != nil
    }

    /// Kills (continuing it first, in case it is stopped) and reaps the child if that has not happened yet.
    public func terminate() {
        guard !isReaped else { return }
        signal(SIGCONT)
        signal(SIGKILL)
        wait(timeout: 10)
    }

    /// Reaps the child if it has exited (with `flags` 0: waits for it). Reaping and recording
    /// it happen under the lock, so `signal` never reaches a reused pid. With WUNTRACED, a
    /// stop is left in `status` and is no exit.
    private func reap(_ status: inout Int32, flags: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let done = exitStatus { status = done << 8; return true }
        let r = waitpid(pid, &status, flags)
        guard r == pid || r < 0, !(r == pid && Self.isStopped(status)) else { return false }
        exitStatus = Self.code(status)
        return true
    }

    /// The result if the child has exited, nil while it runs (never blocks, never kills).
    public func exited() -> ProcessResult? {
        var status: Int32 = 0
        return reap(&status, flags: WNOHANG) ? wait(timeout: 0) : nil
    }

    /// Waits up to `timeout` seconds; kills the child (SIGKILL) if it is still running then.
    @discardableResult
    public func wait(timeout: Double) -> ProcessResult {
        if let done = lock.withLock({ finished }) { return done }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var timedOut = false
        while !reap(&status, flags: WNOHANG) {
            if Date() > deadline {
                kill(pid, SIGCONT)
                kill(pid, SIGKILL)
                _ = reap(&status, flags: 0)
                timedOut = true
                break
            }
            usleep(10_000)
        }
        let code = Self.code(status)
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        unlink(stdoutPath)
        unlink(stderrPath)
        let result = ProcessResult(status: code, stdout: out, stderr: err, timedOut: timedOut)
        lock.withLock { finished = result }
        return result
    }

    /// Reads what the child has written to stdout so far.
    public func currentStdout() -> String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public func currentStderr() -> String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

/// Where a spawned child's standard error goes (captured in a file the result reads back,
/// by default).
public enum ErrorOutput: Sendable {
    case captured
    /// Opened for writing: /dev/full, a FIFO, …
    case path(String)
    /// This descriptor of ours (a pipe's write end, say), duplicated onto 2.
    case descriptor(Int32)
    /// No descriptor 2 at all (`2>&-`).
    case closed
}

public enum Proc {
    /// Finds `name` on PATH.
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    /// Starts `executable` with `arguments`; stdin from `stdinPath` (or /dev/null).
    public static func spawn(_ executable: String, _ arguments: [String], stdinPath: String? = nil,
                             environment: [String: String]? = nil, stdin stdinDescriptor: Int32? = nil,
                             stderr errorOutput: ErrorOutput = .captured) throws -> ChildProcess {
        guard let path = which(executable) else { throw TestError.failed("\(executable) not found on PATH") }
        let tag = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let outPath = NSTemporaryDirectory() + "sr-out-\(tag)"
        let errPath = NSTemporaryDirectory() + "sr-err-\(tag)"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinDescriptor {
            posix_spawn_file_actions_adddup2(&actions, stdinDescriptor, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, stdinPath ?? "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        switch errorOutput {
        case .captured: posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        case .path(let path): posix_spawn_file_actions_addopen(&actions, 2, path, O_WRONLY, 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 2)
        case .closed: posix_spawn_file_actions_addclose(&actions, 2)
        }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var env = environment ?? ProcessInfo.processInfo.environment
        if environment == nil {
            // Never the user's session: no display (X11 or Wayland), and a PulseAudio address that answers
            // nothing (an explicit address also stops libpulse from starting a server).
            env.removeValue(forKey: "DISPLAY")
            env.removeValue(forKey: "WAYLAND_DISPLAY")
            env["PULSE_SERVER"] = "unix:/nonexistent/swift-record-tests/pulse"
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard r == 0 else { throw TestError.failed("posix_spawn \(path): \(String(cString: strerror(r)))") }
        return ChildProcess(pid: pid, stdoutPath: outPath, stderrPath: errPath)
    }

    /// Runs to completion (or `timeout` seconds, then kills).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], stdinPath: String? = nil,
                           environment: [String: String]? = nil, timeout: Double = 120) throws -> ProcessResult {
        try spawn(executable, arguments, stdinPath: stdinPath, environment: environment).wait(timeout: timeout)
    }
}

/// ffprobe and ffmpeg: the independent tools tests check outputs with.
public enum FF {
    public static var available: Bool { Proc.which("ffprobe") != nil && Proc.which("ffmpeg") != nil }

    /// `ffprobe -show_streams -show_format` as JSON, first video stream and format.
    public static func probe(_ path: String, countFrames: Bool = true) throws -> (stream: [String: Any], format: [String: Any]) {
        var args = ["-v", "error", "-select_streams", "v:0", "-show_streams", "-show_format", "-of", "json"]
        if countFrames { args.append("-count_frames") }
        let r = try Proc.run("ffprobe", args + [path], timeout: 120)
        guard r.succeeded, let data = r.stdout.data(using: .utf8),
              let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let streams = json["streams"] as? [[String: Any]], let stream = streams.first,
              let format = json["format"] as? [String: Any] else {
            throw TestError.failed("ffprobe \(path) failed: \(r.stderr)")
        }
        return (stream, format)
    }

    /// Per-frame lines of `ffmpeg -f framemd5` (hash column and timestamps), comments dropped.
    public static func framemd5(_ path: String, inputArgs: [String] = [], outputArgs: [String]) throws -> [String] {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error"] + inputArgs + ["-i", path] + outputArgs + ["-f", "framemd5", "-"], timeout: 300)
        guard r.succeeded else { throw TestError.failed("ffmpeg framemd5 \(path) failed: \(r.stderr)") }
        return r.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    /// The video packets of `path` by ffprobe, in presentation order: each one's time and
    /// whether it is a key frame.
    public static func videoPackets(_ path: String) throws -> [(time: Double, key: Bool)] {
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", path])
        guard r.succeeded else { throw TestError.failed("ffprobe \(path) failed: \(r.stderr)") }
        return r.stdout.split(separator: "\n").compactMap { line -> (time: Double, key: Bool)? in
            let f = line.split(separator: ",")
            return f.count >= 2 ? Double(f[0]).map { (time: $0, key: f[1].hasPrefix("K")) } : nil
        }.sorted { $0.time < $1.time }
    }

    /// Only the hashes of framemd5 lines.
    public static func hashes(_ lines: [String]) -> [String] {
        lines.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// Runs ffmpeg with `args`, failing on a non-zero exit.
    public static func ffmpeg(_ args: [String], timeout: Double = 300) throws {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args, timeout: timeout)
        guard r.succeeded else { throw TestError.failed("ffmpeg \(args.joined(separator: " ")) failed: \(r.stderr)") }
    }

    /// Decodes the first frame at `time` to raw RGB24 and returns the pixel at (x, y).
    public static func rgb(_ path: String, x: Int, y: Int, at time: Double = 0.5) throws -> (Int, Int, Int) {
        let out = NSTemporaryDirectory() + "sr-px-\(UInt32.random(in: 0...UInt32.max)).rgb"
        defer { unlink(out) }
        try ffmpeg(["-ss", "\(time)", "-i", path, "-frames:v", "1", "-vf", "format=rgb24,crop=1:1:\(x):\(y)", "-f", "rawvideo", "-pix_fmt", "rgb24", out])
        let d = try Data(contentsOf: URL(fileURLWithPath: out))
        guard d.count >= 3 else { throw TestError.failed("no pixel decoded from \(path)") }
        return (Int(d[0]), Int(d[1]), Int(d[2]))
    }
}

public func double(_ any: Any?) -> Double? {
    if let s = any as? String { return Double(s) }
    if let d = any as? Double { return d }
    if let i = any as? Int { return Double(i) }
    return nil
}

public func int(_ any: Any?) -> Int? {
    if let s = any as? String { return Int(s) }
    if let i = any as? Int { return i }
    return nil
}

/// A fresh temporary directory for one test, made by mkdtemp (a new one), then given mode
/// 0755: other users reach into it (nginx's workers, the other-user checks). Its name is
/// short: Unix sockets go a few folders below it (a broadcast endpoint's is
/// `DIR/swift-record/broadcast/NAME`), and a socket's path has at most 107 bytes.
public func makeTemporaryDirectory() throws -> URL {
    var template = Array((NSTemporaryDirectory() + "swift-record-test.XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
    guard let path = made, chmod(path, 0o755) == 0 else {
        throw TestError.failed("cannot make a test directory in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
    }
    return URL(fileURLWithPath: path)
}

/// Top-level box types of an ISO BMFF (MP4/MOV) file, in order.
public func topLevelBoxes(_ url: URL) throws -> [String] {
    let data = try Data(contentsOf: url)
    var boxes: [String] = []
    var offset = 0
    while offset + 8 <= data.count {
        var size = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
        let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
        if size == 1, offset + 16 <= data.count {
            size = data[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
        } else if size == 0 {
            size = data.count - offset
        }
        boxes.append(type)
        guard size >= 8 else { break }
        offset += size
    }
    return boxes
}
