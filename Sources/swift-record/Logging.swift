import ArgumentParser
import Logging
import SwiftRecord

/// `-v`/`--verbose` and `--log-level`, the same for every subcommand: what the library's
/// loggers (FFmpeg's messages among them) show on standard error.
struct LoggingOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Show informational messages too (FFmpeg's and the encoders'); the same as --log-level info.")
    var verbose = false

    @Option(help: ArgumentHelp("What the library and FFmpeg log on standard error: critical, error, warning (default), notice, info, debug or trace.",
                               valueName: "level"),
            transform: parsed { text throws(SwiftRecordError) in
                try ValueParsing.choice(text, among: [Logger.Level.critical, .error, .warning, .notice, .info, .debug, .trace],
                                        option: "--log-level", what: "a level", ignoringCase: true)
            })
    var logLevel: Logger.Level?

    /// The level asked for: `--log-level`, else info with `--verbose`, else warning.
    var level: Logger.Level { logLevel ?? (verbose ? .info : .warning) }

    /// Sends every logger to standard error at `level`. Call once, first thing in `run()`,
    /// before the library touches FFmpeg (which is told the level then).
    func bootstrap() {
        let level = self.level
        LoggingSystem.bootstrap { label in
            var handler = StandardErrorLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        // The library passes on FFmpeg's warnings and worse unless asked for more.
        FFmpegLogging.minimumLevel = level
    }
}

/// One line per message on standard error, through `note()` (which never lets a failed write
/// end the program): `swift-record: warning: [libx264 @ 0x…] message`.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        note("swift-record: \(event.level): \(event.message)")
    }
}
