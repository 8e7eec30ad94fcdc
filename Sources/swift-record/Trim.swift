import ArgumentParser
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

/// `swift-record trim`: a part of a recording, copied packet for packet (a smart cut by default).
struct Trim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trim",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Cut a part of a recording into a new file: exact to the frame, re-encoding only up to the first key frame and copying the rest.",
        discussion: """
        The part from --from to --to is copied packet for packet (seconds for a long recording, no generation lost). A copy can only start at a key frame: with --copy the clip starts at the key frame at or before --from (said when it is earlier). It ends with the last picture shown before --to; the sound is cut with the pictures, to the packet (one AAC frame, 21 ms at 48 kHz). The output's times start at 0. The clip carries the first video and the first sound track; other streams (a second sound track, subtitles) are left out with a warning naming them.

        By default the cut is exact when it can be: the pictures from --from to the next key frame are decoded and re-encoded with libx264 at the source's profile, level, size and pixel format (losslessly for a lossless source), their parameter sets beside the source's in one sample description, and everything after is copied (a "smart cut": nearly the speed of a copy). A stream that cannot be matched (not H.264, several parameter sets, an open group of pictures) is said, and copied from the key frame at or before --from instead; --exact makes that a refusal (exit 2), --copy always copies from the key frame.

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

    @Flag(help: "Copy every packet: the clip starts at the key frame at or before --from.")
    var copy = false

    @Flag(help: "Exact to the frame, or refused: re-encode from --from to the next key frame, copy the rest (the default falls back to --copy when the stream cannot be matched).")
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
        session.cutsExactly = !copy
        session.fallsBackToKeyFrame = !exact
        try await ExportRun(command: "trim", quiet: quiet).run(session, to: out)
        if let refusal = session.exactCutRefusal {
            note("swift-record trim: not exact: \(refusal); copied from the key frame before instead")
        }
        let n = session.reencodedPictureCount
        if !quiet && n > 0 {
            note("swift-record trim: exact: re-encoded the \(n) picture\(n == 1 ? "" : "s") from --from to the next key frame (libx264, the source's profile and level), copied the rest")
        }
        if !quiet, n == 0, let key = session.keyFrameStart, key < start {
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
    /// What to say after a refusal (`.unsupported`): how to get what was asked another way.
    var hint: String? = nil

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
            if error.kind == .unsupported, let hint { note("swift-record \(command): \(hint)") }
            note("swift-record \(command): no output written")
            if error.kind == .cancelled { throw ExitStatus.interrupted }
            // What cannot be done as asked (a stream an exact cut cannot match, a join whose
            // decode times would go back) is a refusal, found once the files were read.
            throw session.startedWriting && error.kind != .unsupported ? ExitStatus.failed : ExitStatus.beforeWriting(error)
        }
        progress.stop()
        if !session.leftOutStreams.isEmpty {
            note("swift-record \(command): warning: left out \(session.leftOutStreams.joined(separator: ", ")) (a clip carries the first video and the first sound track)")
        }
        if !quiet {
            note(String(format: "swift-record: wrote %@: %.3f s in %.2f s", out, session.exportedDuration?.seconds ?? 0,
                        Date().timeIntervalSince(started)))
        }
    }
}
