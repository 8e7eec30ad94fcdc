#if canImport(Glibc)
import Glibc
#endif

/// Writes what became of every frame as CSV (the command line's `--timing-log`): one line
/// per output frame, tick left out or lost, dropped picture, pause and resume, and the sound
/// tracks' corrections and ends, in the order decided.
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
/// `repeated`, `filled` (the frame waited for room in the encoder's queue behind later
/// ticks and was written late: after a stall), `gap` (a tick that waited longer than
/// `CaptureSession.maximumFill`: no frame in the file), `missed-source-stuck` (a tick that
/// closed while the source was stuck in a grab: no frame), `dropped-faster-than-frame-rate`,
/// `dropped-paused`, `dropped-not-running`, `dropped-no-buffer` (every capture buffer was
/// in use: the tick repeats the last picture), `unchanged` (left out at a content-driven
/// rate), `paused`, `resumed`; for the sound, `audio-ended` (a source ended early; with
/// `track=N` when there are several) and the writer's synchronisation:
/// `audio-silence-inserted`, `audio-samples-dropped` and `audio-compensation`
/// (`AudioSyncEvent.Kind`) with `offset_ms=`, `samples=`, `ratio_ppm=` and, for several
/// sources, `track=N`. Sound lines have no frame; a correction's `pts` is where in the track
/// it was made.
public final class TimingLog: Sendable {
    public let path: String
    private let output: OutputFile
    private struct State {
        /// The open file; nil once closed.
        var file: UnsafeMutablePointer<FILE>?
        /// The first write error, kept for `finish()`.
        var error: SwiftRecordError?
    }
    private let state: Locked<State>

    package static let header = "frame,pts,capture_time,host_time,reason"

    /// Creates the file at `path` and writes the header. The path follows the rule for
    /// every file swift-record writes (`OutputFile`): a new regular file, or with
    /// `overwrite` an existing one, replaced once the log is complete.
    public convenience init(path: String, overwrite: Bool = false) throws(SwiftRecordError) {
        try self.init(file: OutputFile(path, what: "timing log", overwrite: overwrite))
    }

    package init(file output: OutputFile) throws(SwiftRecordError) {
        self.path = output.requestedPath
        self.output = output
        let fd = try output.create()
        guard let f = fdopen(fd, "w") else {
            let e = errno
            Glibc.close(fd)
            output.discard()
            throw SwiftRecordError(.io, operation: "timing log", message: "cannot write \(path): \(String(cString: strerror(e)))")
        }
        // Line-buffered: the log can be followed (tail -f) while recording; a few dozen lines a second.
        setvbuf(f, nil, _IOLBF, 0)
        state = Locked(State(file: f))
        write(TimingLog.header + "\n")
    }

    deinit { _ = try? finish() }

    /// Appends one line. Times are seconds; nil leaves the column empty.
    package func record(frame: Int64?, presentationTime: MediaTime?, captureTime: Double?, hostTime: Double, reason: String) {
        let line = [
            frame.map(String.init) ?? "",
            presentationTime.map(TimingLog.format) ?? "",
            captureTime.map(TimingLog.format) ?? "",
            TimingLog.format(hostTime),
            reason,
        ].joined(separator: ",") + "\n"
        write(line)
    }

    private func write(_ line: String) {
        state.withLock { s in
            guard let f = s.file, s.error == nil else { return }
            if fputs(line, f) < 0 {
                s.error = SwiftRecordError(.io, operation: "timing log", message: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Flushes and closes the file; a later call does nothing.
    public func close() { _ = try? finish() }

    /// Flushes and closes the file and throws the first write error, if any (a full disk,
    /// an I/O error): the log is then incomplete. A later call does nothing.
    public func finish() throws(SwiftRecordError) {
        let (file, error) = state.withLock { s in
            defer { s.file = nil }
            return (s.file, s.error)
        }
        guard let file else {
            if let error { throw error }
            return
        }
        var failure = error
        if fflush(file) != 0 || ferror(file) != 0, failure == nil {
            failure = SwiftRecordError(.io, operation: "timing log", message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        if fclose(file) != 0, failure == nil {
            failure = SwiftRecordError(.io, operation: "timing log", message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        if let failure {
            state.withLock { $0.error = failure }
            // An incomplete log does not replace an existing one.
            if output.replacesExistingFile { output.discard() }
            throw failure
        }
        try output.commit()
    }

    /// Closes the file and removes it (the one this log created; an existing file it was
    /// to replace stays as it was): for a recording abandoned before it started.
    package func discard() {
        let file = state.withLock { s in
            defer { s.file = nil }
            return s.file
        }
        guard let file else { return }
        fclose(file)
        output.discard()
    }

    /// The first write error, once `finish()` has run or a write failed.
    public var writeError: SwiftRecordError? { state[\.error] }

    /// Seconds with six decimals, from an exact time (rounded toward zero at the microsecond).
    static func format(_ t: MediaTime) -> String {
        guard t.isNumeric else { return "" }
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
