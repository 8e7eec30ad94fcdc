import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One line of a `--timing-log` CSV: `frame,pts,capture_time,host_time,reason`. Times are
/// seconds since the recording's session started (its own clock, not the test's).
public struct TimingLogRow: Sendable, Equatable {
    public let frame: Int64?
    public let pts: Double?
    public let captureTime: Double?
    public let hostTime: Double
    public let reason: String
}

/// Reads a recorder's timing log, also while it is being written: lets a test act at a
/// known frame of the recording, and measure wall-clock figures from the recording's events.
public enum TimingLogFile {
    /// The complete lines written so far (a line still being written is left out).
    public static func rows(_ path: String) -> [TimingLogRow] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a partial line
        return lines.compactMap { line -> TimingLogRow? in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 5, let host = Double(f[3]) else { return nil }
            return TimingLogRow(frame: Int64(f[0]), pts: Double(f[1]), captureTime: Double(f[2]), hostTime: host, reason: f[4])
        }
    }

    /// The first row for output frame `n` or later whose reason is one of `reasons` (any
    /// reason if nil), waiting up to `timeout` seconds of the test's clock for it to appear.
    public static func waitForFrame(_ n: Int64, in path: String, reasons: Set<String>? = nil, timeout: Double) -> TimingLogRow? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let row = rows(path).first(where: { ($0.frame ?? -1) >= n && (reasons?.contains($0.reason) ?? true) }) {
                return row
            }
            if Date() > deadline { return nil }
            usleep(5_000)
        }
    }
}

extension TimingLogFile {
    /// Sends each child its signal once its timing log shows output frame `frame`: a moment of
    /// the recording itself, so a slow start on a busy machine does not move it. The children
    /// are followed together. Returns, per child, the last frame logged when its signal was
    /// sent, or nil if it exited (or `timeout` seconds passed) before the frame came.
    @discardableResult
    public static func signal(_ plan: [(child: ChildProcess, log: String, frame: Int64, signal: Int32)],
                              timeout: Double = 60) -> [Int64?] {
        var sentAt = [Int64?](repeating: nil, count: plan.count)
        var pending = Set(plan.indices)
        let deadline = Date().addingTimeInterval(timeout)
        while !pending.isEmpty, Date() < deadline {
            for i in pending.sorted() {
                let step = plan[i]
                if step.child.exited() != nil { pending.remove(i); continue }
                guard let last = rows(step.log).compactMap(\.frame).max(), last >= step.frame else { continue }
                step.child.signal(step.signal)
                sentAt[i] = last
                pending.remove(i)
            }
            usleep(5_000)
        }
        return sentAt
    }
}
