import ArgumentParser
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// `swift-record trim`: a part of a recording, copied packet for packet.
struct Trim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trim",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Cut a part of a recording into a new file, copying its packets (nothing re-encoded).",
        discussion: """
        The part from --from to --to is copied packet for packet (seconds for a long recording, no generation lost). A copy can only start at a key frame: the clip starts at the key frame at or before --from (said when it is earlier) and ends with the last picture shown before --to; the sound is cut with the pictures, to the packet (one AAC frame, 21 ms at 48 kHz). The output's times start at 0.

        --exact (re-encoding the pictures from --from to the next key frame, copying the rest) is not built yet; it is refused, and --copy is the default.

        The output's container is from -o's extension (default: IN's name with -trim before its extension). An existing file is replaced only with -y, once the new one is complete; stopped by Ctrl-C, SIGTERM or SIGHUP, or failing, it leaves nothing under the output's name.

        EXAMPLES
          swift-record trim recording.mp4 --from 2s --to 1m30s
              Writes recording-trim.mp4.
          swift-record trim recording.mkv --from 10 -o end.mkv
              From the key frame at or before 10 s to the end.
        """
    )

    @Argument(help: ArgumentHelp("The recording to cut (MP4, MOV, MKV, WebM, …).", valueName: "input"))
    var input: String

    @Option(help: ArgumentHelp("Where the part starts: 90, 1.5, 2m, 1m30s (default: the start).", valueName: "time"),
            transform: parsed(ValueParsing.durationOrZero))
    var from: MediaTime?

    @Option(help: ArgumentHelp("Where the part ends (default: the end).", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var to: MediaTime?

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file; the extension picks the container (default: IN-trim with IN's extension).", valueName: "file"))
    var output: String?

    @Flag(help: "Copy every packet: the clip starts at the key frame at or before --from (the default).")
    var copy = false

    @Flag(help: "Exact to the frame by re-encoding from --from to the next key frame (not built yet: refused).")
    var exact = false

    @Flag(name: .shortAndLong, help: "No progress line and no notes; only errors and warnings.")
    var quiet = false

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func validate() throws {
        if copy && exact { throw ValidationError("--copy and --exact exclude each other; give one") }
        if let from, let to, to <= from {
            throw ValidationError(String(format: "--to %.3f s is not after --from %.3f s; expected an end after the start", to.seconds, from.seconds))
        }
    }

    func run() async throws {
        logging.bootstrap()
        if exact {
            note("swift-record trim: --exact (re-encoding from --from to the next key frame) is not built yet; use --copy, which starts at the key frame at or before --from, or `swift-record convert` to re-encode everything")
            throw ExitStatus.refused
        }
        let out = output ?? Trim.defaultOutput(for: input)
        let start = from ?? .zero
        let session: AssetExportSession
        do {
            session = try AssetExportSession(asset: URL(fileURLWithPath: input), presetName: AssetExportSession.presetPassthrough)
        } catch {
            note("swift-record trim: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        session.timeRange = to.map { TimeRange(start: start, end: $0) } ?? TimeRange(start: start, duration: .positiveInfinity)
        session.overwritesExistingFile = replace.overwrite
        try await ExportRun(command: "trim", quiet: quiet).run(session, to: out)
        if !quiet, let key = session.keyFrameStart, key < start {
            note(String(format: "swift-record trim: the clip starts at the key frame at %.3f s, %.3f s before --from (a copy starts only at a key frame)",
                        key.seconds, (start - key).seconds))
        }
    }

    /// `dir/in.mp4` → `dir/in-trim.mp4`.
    static func defaultOutput(for input: String) -> String {
        let slash = input.lastIndex(of: "/").map { input.index(after: $0) } ?? input.startIndex
        guard let dot = input[slash...].lastIndex(of: "."), dot != slash else { return input + "-trim.mp4" }
        return String(input[..<dot]) + "-trim" + String(input[dot...])
    }
}

/// Runs an export with Ctrl-C cancelling it and a progress line, and says what it wrote.
struct ExportRun {
    let command: String
    let quiet: Bool

    func run(_ session: AssetExportSession, to out: String) async throws {
        let signals = SignalWatcher { name in
            note("\nswift-record \(command): \(name): stopping")
            session.cancelExport()
        }
        let started = Date()
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1) {
            String(format: "%3.0f %%  %@", session.progress * 100, formatClock(Date().timeIntervalSince(started)))
        }
        defer {
            progress.stop()
            signals.cancel()
        }
        session.howToReplace = "pass --overwrite (-y)"
        let url = URL(fileURLWithPath: out)
        guard let type = FileType(pathExtension: url.pathExtension) else {
            note("swift-record \(command): '\(out)' has no known container extension; expected .mp4, .mov, .mkv or .webm")
            throw ExitStatus.refused
        }
        do {
            try await session.export(to: url, as: type)
        } catch {
            progress.stop()
            note("swift-record \(command): \(error.userMessage)")
            note("swift-record \(command): no output written")
            if error.kind == .cancelled { throw ExitStatus.interrupted }
            throw session.startedWriting ? ExitStatus.failed : ExitStatus.beforeWriting(error)
        }
        progress.stop()
        if !quiet {
            note(String(format: "swift-record: wrote %@: %.3f s in %.2f s", out, session.exportedDuration?.seconds ?? 0,
                        Date().timeIntervalSince(started)))
        }
    }
}
