internal import CFFmpeg
import Logging

/// The library's loggers, one per subsystem, through swift-log: the application chooses
/// the backend (`LoggingSystem.bootstrap`) and the level; the library never writes to
/// standard error on its own.
///
/// - `swift-record.ffmpeg`: FFmpeg's own messages (`av_log`: libavcodec, libavformat and the
///   encoders they wrap, such as libx264), each at the level FFmpeg gave it.
/// - `swift-record.writer`: the writer's own notices (a choice it made that a user may
///   want to know about).
/// - `swift-record.capture`: a capture source's notices while recording (a Wayland monitor
///   that changed size, its pictures letterboxed).
package enum Log {
    package static var writer: Logger { Logger(label: "swift-record.writer") }
    /// The capture sources' notices while recording (a screen that changed size).
    package static var capture: Logger { Logger(label: "swift-record.capture") }

    /// Made anew for each message FFmpeg's level lets through (few: warnings and errors by
    /// default), so a backend bootstrapped after the library first used FFmpeg still gets them.
    package static var ffmpeg: Logger { Logger(label: "swift-record.ffmpeg") }
}

/// What the library passes on of FFmpeg's own messages.
public enum FFmpegLogging {
    private static let floor = Locked(Logger.Level.warning)

    /// The least severe FFmpeg message passed to the `swift-record.ffmpeg` logger:
    /// `.warning` unless the application asks for more (`.info` shows libx264's statistics at
    /// the end of each encode, `.debug` FFmpeg's verbose lines). The logger's own level still
    /// applies: a message reaches the backend when both let it through.
    public static var minimumLevel: Logger.Level {
        get { floor.withLock { $0 } }
        set {
            floor.withLock { $0 = newValue }
            FFmpegLog.route()
        }
    }
}

/// Routes FFmpeg's `av_log` into the `swift-record.ffmpeg` logger. FFmpeg is told the
/// logger's level (at least ``FFmpegLogging/minimumLevel``) when the library first uses FFmpeg, so messages below it are not even
/// formatted (libx264 formats per-frame lines at its debug level); levels map as
/// panic/fatal → critical, error → error, warning → warning, info → info, verbose → debug,
/// debug/trace → trace.
enum FFmpegLog {
    static let configure: Void = { route() }()

    /// The level messages must reach: the logger's, and at least the application's minimum.
    static var effectiveLevel: Logger.Level { max(Log.ffmpeg.logLevel, FFmpegLogging.minimumLevel) }

    /// Tells FFmpeg which messages to format and pass on.
    static func route() {
        sr_route_ffmpeg_log(FFmpegLog.avLevel(for: effectiveLevel))
    }

    /// Contexts whose messages are not logged (`quieted`), as FFmpeg's lines name them:
    /// "@ 0x55d0c8a1b2c0]".
    private static let quiet = Locked(Set<String>())

    /// Runs `body` with the messages of `context` (a trial: a muxer asked whether it takes a
    /// codec) kept out of the log: its refusal is an answer, not an error of the run.
    static func quieted<R>(_ context: UnsafeMutableRawPointer, _ body: () -> R) -> R {
        let name = "@ 0x\(String(UInt(bitPattern: context), radix: 16))]"
        quiet.withLock { _ = $0.insert(name) }
        defer { quiet.withLock { _ = $0.remove(name) } }
        return body()
    }

    /// Whether `line` comes from a context `quieted` keeps out of the log.
    static func isQuieted(_ line: String) -> Bool {
        quiet.withLock { names in !names.isEmpty && names.contains { line.contains($0) } }
    }

    /// The swift-log level of FFmpeg's level `level`.
    static func level(ofFFmpeg level: Int32) -> Logger.Level {
        switch level {
        case ...sr_log_fatal(): .critical
        case ...sr_log_error(): .error
        case ...sr_log_warning(): .warning
        case ...sr_log_info(): .info
        case ...sr_log_verbose(): .debug
        default: .trace
        }
    }

    /// FFmpeg's level that lets through what a logger at `level` shows.
    static func avLevel(for level: Logger.Level) -> Int32 {
        switch level {
        case .critical: sr_log_fatal()
        case .error: sr_log_error()
        case .warning: sr_log_warning()
        case .info, .notice: sr_log_info()
        case .debug: sr_log_verbose()
        case .trace: sr_log_trace()
        }
    }
}

/// Each line FFmpeg logs, formatted by the shim's `av_log` callback (with the
/// `[libx264 @ 0x…]` prefix): logged at its level, its trailing newline removed.
@_cdecl("swift_record_ffmpeg_log")
func ffmpegLogLine(_ avLevel: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line, avLevel >= 0 else { return }
    let level = FFmpegLog.level(ofFFmpeg: avLevel)
    let logger = Log.ffmpeg
    guard max(logger.logLevel, FFmpegLogging.minimumLevel) <= level else { return }
    var text = String(cString: line)
    while let last = text.last, last.isNewline || last == " " { text.removeLast() }
    guard !text.isEmpty, !FFmpegLog.isQuieted(text) else { return }
    logger.log(level: level, "\(text)", metadata: ["ffmpeg.level": "\(avLevel)"])
}
