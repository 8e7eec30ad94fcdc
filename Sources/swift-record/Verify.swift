import ArgumentParser
import Foundation
import SwiftRecord

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Read the synthetic scene's frame-number band from a recording and report gaps, repeats and reordering.",
        discussion: "Exits 0 when every frame was read and the indices run without gaps, repeats or reordering; 1 when they do not; 2 when the file cannot be read (the exit statuses of every subcommand: man swift-record)."
    )

    @Argument(help: "A recording of the synthetic scene (any container and codec FFmpeg decodes).")
    var file: String

    @Flag(help: "Print every frame's decoded index, one per line.")
    var list = false

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        let report: FrameIndexReport
        do {
            report = try FrameIndexBand.verify(path: file)
        } catch {
            note("swift-record verify: \(error.userMessage)")
            throw ExitStatus.refused
        }
        if list && !report.indices.isEmpty {
            say(report.indices.enumerated().map { n, i in "\(n)\t\(i.map(String.init) ?? "?")" }.joined(separator: "\n"))
        }
        say(report.description)
        if !report.isClean { throw ExitStatus.failed }
    }
}
