import ArgumentParser
import Foundation
import SwiftRecord

/// `swift-record join`: recordings one after another in one file, copied packet for packet
/// (or re-encoded to the first's settings with `--reencode`).
struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Join recordings into one file, copying their packets (same settings), or re-encoding them to the first's (--reencode).",
        discussion: """
        Each recording starts where the one before ends (the end of its last picture), its pictures and sound moved alike, so they stay in step at every join; sound running past a recording's last picture is cut there. The recordings must have the same streams with the same settings (codec, picture size, pixel format, profile and level, the encoder's parameter sets; sample rate and channels): a copy carries one description per track. Otherwise nothing is written and the setting that differs is named (exit 2).

        With --reencode every recording is decoded and encoded again (H.264 and AAC, AVAssetExportPresetHighestQuality) at the first's settings: its picture size (another size is scaled to it; another aspect fitted inside, on black bars), its frame rate for the timing, its sample rate (a usual one, else 48 kHz) and up to two channels. Pictures and sound are laid on the same timeline, so they stay in step at every join.

        The output's container is from -o's extension. An existing file is replaced only with -y, once the new one is complete; stopped by Ctrl-C, SIGTERM or SIGHUP, or failing, it leaves nothing under the output's name.

        EXAMPLES
          swift-record join part1.mp4 part2.mp4 part3.mp4 -o whole.mp4
          swift-record join phone.mp4 screen.mkv --reencode -o both.mp4
        """
    )

    @Argument(help: ArgumentHelp("The recordings, in order (at least two).", valueName: "input"))
    var inputs: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file; the extension picks the container.", valueName: "file"))
    var output: String

    @Flag(help: "Re-encode every recording to the first's settings (size, frame rate, sample rate) instead of copying; joins recordings of different settings.")
    var reencode = false

    @Flag(name: .shortAndLong, help: "No progress line and no notes; only errors and warnings.")
    var quiet = false

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func validate() throws {
        if inputs.count < 2 { throw ValidationError("join needs at least two recordings; got \(inputs.count)") }
    }

    func run() async throws {
        logging.bootstrap()
        let composition = MutableComposition()
        let session: AssetExportSession
        do {
            for input in inputs {
                try composition.insertTimeRange(nil, of: URL(fileURLWithPath: input), at: composition.duration)
            }
            session = try AssetExportSession(composition: composition,
                                             presetName: reencode ? AssetExportSession.presetHighestQuality : AssetExportSession.presetPassthrough)
        } catch {
            note("swift-record join: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        session.overwritesExistingFile = replace.overwrite
        try await ExportRun(command: "join", quiet: quiet,
                            hint: reencode ? nil : "pass --reencode to bring them to the first's settings").run(session, to: output)
    }
}
