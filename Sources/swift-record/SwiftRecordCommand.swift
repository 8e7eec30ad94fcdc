import ArgumentParser
import Foundation
import SwiftRecord

@main
struct SwiftRecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swift-record",
        abstract: "Record the screen or a synthetic scene, and convert raw video, to MP4, MOV, MKV or WebM.",
        discussion: """
        EXAMPLES
          swift-record -o screen.mkv
              The screen and the desktop's sound until Ctrl-C (the synthetic
              scene without a display; no sound without a PulseAudio server).
          swift-record --audio default --audio pulse:mic -o talk.mkv
              The desktop's sound and a microphone, a track each.
          swift-record --fps 30 --bitrate 2M --duration 1m -o minute.mp4
              A minute at 30 fps and 2 Mbit/s.
          swift-record --source synthetic --size 1280x720 --frames 300 -o demo.mp4
              Render 300 frames of the synthetic scene as fast as they encode.
          swift-record --source synthetic --realtime --duration 1m30s -o live.mkv
              Record the synthetic scene in real time for 90 seconds.
          swift-record convert in.yuv --size 1280x720 --fps 30
              Encode raw I420 frames to in.mp4 (convert --help: Y4M, pixel formats).
          swift-record trim recording.mp4 --from 2s --to 1m30s
              Write recording-trim.mp4 by copying packets, from the key frame at or before 2 s.
          swift-record join part1.mp4 part2.mp4 -o whole.mp4
              Join recordings with the same settings, copying their packets.
          swift-record thumbnail recording.mkv --at 5s
              Write recording.png, the picture shown at 5 s (--sheet 4x4: a contact sheet).
          swift-record verify demo.mp4
              Read the frame-number band back and report gaps, repeats and reordering.
          swift-record repair cut-off.mp4
              Turn a recording cut off by a crash or kill into a normal, seekable file.
        """,
        version: "swift-record \(SwiftRecordVersion.string) (\(SwiftRecordVersion.ffmpegLibraries))",
        subcommands: [Record.self, Convert.self, Trim.self, Join.self, Thumbnail.self, Screenshot.self, Verify.self, Repair.self],
        defaultSubcommand: Record.self
    )

    /// Regular pages for the encoders before anything is parsed or opened: see
    /// `EncoderMemory` (about 0.8 s of CPU saved per 1080p recording on a VM).
    static func main() async {
        Console.prepare()
        EncoderMemory.preferRegularPages()
        let arguments = rawArguments()
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            say(fullHelp())
            return
        }
        await main(attachingNegativeValues(arguments))
    }

    /// The arguments as the kernel gave them: `CommandLine.arguments` replaces bytes that
    /// are not UTF-8 with U+FFFD, which would make `-o $'y\xff.mp4'` write `y\u{FFFD}.mp4`.
    /// Read from argv instead, each carried losslessly (`PathBytes`) down to the `open`.
    static func rawArguments() -> [String] {
        (1..<Int(CommandLine.argc)).compactMap { i in
            CommandLine.unsafeArgv[i].map { PathBytes.string(cString: $0) }
        }
    }

    /// `--fps -5` becomes `--fps=-5`. The parser takes a word starting with `-` for an
    /// option, so a negative value read as a missing one ("Missing value for '--fps'");
    /// attached, it reaches the option's own check, which says it is negative and what
    /// is expected. A word that reads as a negative number is never an option's name.
    static func attachingNegativeValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var i = 0
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" { return result + arguments[i...] }
            if word.hasPrefix("--"), !word.contains("="), i + 1 < arguments.count,
               ValueParsing.isNegativeNumber(arguments[i + 1]) {
                result.append(word + "=" + arguments[i + 1])
                i += 2
                continue
            }
            result.append(word)
            i += 1
        }
        return result
    }

    /// `swift-record --help`: the overview and the subcommands, then the options of `record`,
    /// the default subcommand, which a bare `swift-record …` runs.
    static func fullHelp() -> String {
        let record = helpMessage(for: Record.self)
        return helpMessage() + "\n\nRECORD, THE DEFAULT SUBCOMMAND (swift-record [record] [<options>]):\n\n" + record
    }
}

/// A failure the command reports in one line and turns into a non-zero exit.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension SwiftRecordError {
    /// The text shown to a person: the message, and the operation when it adds something.
    var userMessage: String { description }
}
