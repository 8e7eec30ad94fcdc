#if canImport(Glibc)
import Glibc
#endif

/// Writes what became of every frame as CSV (the command line's `--timing-log`): one line
/// per output frame, dropped picture, pause and resume, in the order decided.
///
///     frame,pts,capture_time,host_time,reason
///     0,0.000000,0.000081,0.000372,captured
///     1,0.033333,0.000081,0.071522,repeated
///     ,,0.052113,0.052190,dropped-faster-than-frame-rate
///     90,3.000000,,3.012345,paused
///     90,3.000000,,5.013012,resumed
///
/// `frame` and `pts` are the output position (for a pause or resume: where the file
/// continues); `capture_time` is when the picture shown was taken and `host_time` when
/// the decision was made, both in seconds since the session started. Reasons: `captured`,
/// `repeated`, `dropped-faster-than-frame-rate`, `dropped-paused`, `dropped-not-running`,
/// `dropped-encoder-busy` (the encoder's queue was full), `dropped-no-buffer` (every
/// capture buffer was in use), `paused`, `resumed`.
public final class TimingLog: Sendable {
    public let path: String
    /// The open file; nil once closed.
    private let file: Locked<UnsafeMutablePointer<FILE>?>

    public static let header = "frame,pts,capture_time,host_time,reason"

    /// Creates (or truncates) the file at `path` and writes the header.
    public init(path: String) throws(SwiftRecordError) {
        self.path = path
        guard let f = fopen(path, "w") else {
            throw SwiftRecordError(.io, operation: "timing log", message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        // Line-buffered: the log can be followed (tail -f) while recording; a few dozen lines a second.
        setvbuf(f, nil, _IOLBF, 0)
        fputs(TimingLog.header + "\n", f)
        file = Locked(f)
    }

    deinit { close() }

    /// Appends one line. Times are seconds; nil leaves the column empty.
    public func record(frame: Int64?, presentationTime: MediaTime?, captureTime: Double?, hostTime: Double, reason: String) {
        let line = [
            frame.map(String.init) ?? "",
            presentationTime.map(TimingLog.format) ?? "",
            captureTime.map(TimingLog.format) ?? "",
            TimingLog.format(hostTime),
            reason,
        ].joined(separator: ",") + "\n"
        file.withLock { f in
            if let f { fputs(line, f) }
        }
    }

    /// Flushes and closes the file. Safe to call more than once.
    public func close() {
        file.withLock { f in
            if let open = f { fclose(open) }
            f = nil
        }
    }

    /// Seconds with six decimals, from an exact time (rounded toward zero at the microsecond).
    static func format(_ t: MediaTime) -> String {
        guard t.isValid else { return "" }
        let micro = t.convertScale(1_000_000, rounding: .towardZero).value
        return micros(micro)
    }

    static func format(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "" }
        return micros(Int64((seconds * 1_000_000).rounded()))
    }

    private static func micros(_ v: Int64) -> String {
        let sign = v < 0 ? "-" : ""
        let a = v.magnitude
        let frac = String(a % 1_000_000)
        return "\(sign)\(a / 1_000_000)." + String(repeating: "0", count: 6 - frac.count) + frac
    }
}
