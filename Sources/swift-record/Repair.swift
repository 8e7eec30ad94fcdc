import ArgumentParser
import Foundation
import SwiftRecord

struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Turn a cut-off recording (killed process, crash, power loss) into a normal, seekable file.",
        discussion: """
        Works on crash-safe recordings (the default: fragmented MP4/MOV, MKV): every complete fragment is kept, the cut-off end is dropped, and a full index is written, at the front of the file. A recording made with --no-fragments that was cut off has no index and cannot be repaired. Nothing is re-encoded. In place, FILE is replaced only once the repaired copy is complete and reads back whole, and a complete, ordinary file (every packet readable, reaching the duration it states) is left as it is ("nothing to repair"); an existing file given with -o only with --overwrite.

        EXAMPLES
          swift-record repair recording.mp4            (in place)
          swift-record repair recording.mp4 -o fixed.mp4
        """
    )

    @Argument(help: "The cut-off recording.")
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the repaired file (default: replace FILE).", valueName: "file"))
    var output: String?

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        let input = URL(fileURLWithPath: file)
        guard FileIdentity(path: input.path) != nil else {
            note("swift-record repair: \(file) does not exist")
            throw ExitStatus.refused
        }
        let target = URL(fileURLWithPath: output ?? file)
        // Nothing is re-encoded, so the repaired file is in the recording's own container.
        if let output, let kind = FileType(pathExtension: input.pathExtension),
           FileType(pathExtension: target.pathExtension) != kind {
            note("swift-record repair: -o \(output): the repaired file keeps the recording's container (.\(kind)), as nothing is re-encoded; expected a name ending in .\(kind)")
            throw ExitStatus.refused
        }
        do {
            let report = try MediaRepair.repair(input: input, output: target, overwritesExistingFile: replace.overwrite)
            say("\(target.path): \(report)")
        } catch {
            note("swift-record repair: \(error.userMessage)")
            throw error.kind == .fileAlreadyExists || error.kind == .invalidArgument ? ExitStatus.refused : ExitStatus.failed
        }
    }
}
