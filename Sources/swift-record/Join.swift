import ArgumentParser
import Foundation
import SwiftRecord

/// `swift-record join`: recordings one after another in one file, copied packet for packet.
struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Join recordings with the same settings into one file, copying their packets (nothing re-encoded).",
        discussion: """
        Each recording starts where the one before ends (the end of its last picture), its pictures and sound moved alike, so they stay in step at every join; sound running past a recording's last picture is cut there. The recordings must have the same streams with the same settings (codec, picture size, pixel format, profile and level, the encoder's parameter sets; sample rate and channels): a copy carries one description per track. Otherwise nothing is written and the setting that differs is named; re-encode one (`swift-record convert`) to match the first.

        The output's container is from -o's extension. An existing file is replaced only with -y, once the new one is complete; stopped by Ctrl-C, SIGTERM or SIGHUP, or failing, it leaves nothing under the output's name.

        EXAMPLES
          swift-record join part1.mp4 part2.mp4 part3.mp4 -o whole.mp4
        """
    )

    @Argument(help: ArgumentHelp("The recordings, in order (at least two).", valueName: "input"))
    var inputs: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file; the extension picks the container.", valueName: "file"))
    var output: String

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
            session = try AssetExportSession(composition: composition, presetName: AssetExportSession.presetPassthrough)
        } catch {
            note("swift-record join: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        session.overwritesExistingFile = replace.overwrite
        try await ExportRun(command: "join", quiet: quiet).run(session, to: output)
    }
}
