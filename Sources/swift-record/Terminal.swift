import Dispatch
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT, SIGTERM and SIGHUP into a call on a queue (so the recording can be
/// finished properly) instead of killing the process, and SIGUSR1 into a pause toggle.
///
/// `init` returns once libdispatch has armed every source (its registration handler ran),
/// so a signal sent after it (after the output file appears, say) is never missed. A
/// signal's disposition is left alone until then: libdispatch installs its own handler when
/// it arms the source, and a signal that comes before ends the process as it always would
/// (setting SIG_IGN first, as on Darwin, discarded a signal sent in between, and a stop
/// during start-up was lost while the manager thread was slow to arm the source).
final class SignalWatcher: Sendable {
    private let sources: Locked<[any DispatchSourceSignal]>

    convenience init(_ handler: @escaping @Sendable (String) -> Void) {
        self.init(stop: handler, togglePause: nil)
    }

    init(stop handler: @escaping @Sendable (String) -> Void, togglePause: (@Sendable () -> Void)?,
         saveReplay: (@Sendable () -> Void)? = nil) {
        let queue = DispatchQueue(label: "swift-record.signals")
        let armed = DispatchGroup()
        var made: [any DispatchSourceSignal] = []
        func watch(_ sig: Int32, _ action: @escaping @Sendable () -> Void) {
            #if !os(Linux)
            signal(sig, SIG_IGN)
            #endif
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler(handler: action)
            armed.enter()
            s.setRegistrationHandler { armed.leave() }
            s.resume()
            made.append(s)
        }
        for (sig, name) in [(SIGINT, "interrupted"), (SIGTERM, "terminated"), (SIGHUP, "hang-up")] {
            watch(sig) { handler(name) }
        }
        if let togglePause {
            watch(SIGUSR1, togglePause)
        }
        if let saveReplay {
            watch(SIGUSR2, saveReplay)
        }
        sources = Locked(made)
        // Armed within milliseconds; the bound only keeps a wedged libdispatch from hanging us.
        _ = armed.wait(timeout: .now() + 5)
    }

    func cancel() {
        let all = sources.withLock { s in
            let taken = s
            s = []
            return taken
        }
        for s in all { s.cancel() }
    }
}

/// Commands typed on a terminal while recording: `p` + Enter toggles pause, `q` + Enter
/// stops, `s` + Enter saves the replay buffer.
enum TerminalCommand {
    case togglePause, stop, saveReplay
}

enum TerminalCommands {
    /// Reads standard input on a thread of its own when it is a terminal; returns false
    /// (and reads nothing) otherwise, so a script's stdin is left alone. The thread ends
    /// with the process.
    static func startIfInteractive(_ handler: @escaping @Sendable (TerminalCommand) -> Void) -> Bool {
        guard isatty(STDIN_FILENO) == 1 else { return false }
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                switch line.trimmingCharacters(in: .whitespaces).lowercased() {
                case "p", "pause": handler(.togglePause)
                case "q", "quit", "stop": handler(.stop)
                case "s", "save": handler(.saveReplay)
                default: break
                }
            }
        }
        thread.name = "swift-record.stdin"
        thread.start()
        return true
    }
}

/// A progress line redrawn twice a second on a terminal. Not `Sendable`: the command
/// that starts it stops it.
final class ProgressLine {
    private let timer: DispatchSourceTimer?

    init(enabled: Bool, render: @escaping @Sendable () -> String) {
        guard enabled else { timer = nil; return }
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "swift-record.progress"))
        t.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        t.setEventHandler {
            Console.standardError.write("\r\u{1B}[K" + render())
        }
        t.resume()
        timer = t
    }

    func stop() {
        guard let timer else { return }
        timer.cancel()
        Console.standardError.write("\r\u{1B}[K")
    }
}

func fileSize(_ path: String) -> Int64 {
    var st = stat()
    return PathBytes.withCString(path, { stat($0, &st) }) == 0 ? Int64(st.st_size) : 0
}

func formatBytes(_ n: Int64) -> String {
    let d = Double(n)
    if d >= 1e9 { return String(format: "%.2f GB", d / 1e9) }
    if d >= 1e6 { return String(format: "%.1f MB", d / 1e6) }
    if d >= 1e3 { return String(format: "%.0f kB", d / 1e3) }
    return "\(n) B"
}

func formatBitRate(_ bps: Double) -> String {
    bps >= 1e6 ? String(format: "%.2f Mbit/s", bps / 1e6) : String(format: "%.0f kbit/s", bps / 1e3)
}

func formatClock(_ seconds: Double) -> String {
    let s = max(0, seconds)
    return String(format: "%02d:%04.1f", Int(s) / 60, s.truncatingRemainder(dividingBy: 60))
}
