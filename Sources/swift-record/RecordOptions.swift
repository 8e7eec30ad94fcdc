import ArgumentParser
import SwiftRecord

/// `record`'s outputs and the files written beside them (help: "Output and files").
struct RecordOutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("Output: a file (the extension picks the container; default swift-record-DATE-TIME.mp4, -2, -3, … when taken), or a live output: rtmp://host/app/key, srt://host:port, or a .m3u8 playlist (HLS). Repeat to record and stream at once from one encode.", valueName: "file|url"))
    var output: [String] = []

    @Flag(help: "HLS outputs (.m3u8) with fragmented MP4 segments instead of MPEG-TS.")
    var hlsFmp4 = false
    @Option(help: ArgumentHelp("HLS: list only the last n segments (a rolling playlist; older segments are removed). 0, the default, lists all.", valueName: "n"))
    var hlsListSize = 0

    @Option(help: ArgumentHelp("Crash-safe writing: flush a fragment to the file this often (default 1 s). A killed recording keeps all but the fragment in progress; a finished one is an ordinary file.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var fragmentInterval: MediaTime = RecordOutputOptions.defaultFragmentInterval

    /// One second: a killed recording then loses at most about 1.6 s (the fragment in
    /// progress plus the encoder's look-ahead of ~0.5 s). Two-second fragments would lose
    /// up to 2.6 s.
    static let defaultFragmentInterval = MediaTime(seconds: 1)

    @Flag(help: "Write one index at the end instead of fragments (a killed recording is then lost).")
    var noFragments = false

    @Option(help: ArgumentHelp("Write the final figures (frames, drops, sizes, times) as JSON to this file.", valueName: "file"))
    var statsJSON: String?

    @Option(help: ArgumentHelp("Write each frame's capture time, presentation time and fate (captured, repeated, dropped, paused) as CSV.", valueName: "file"))
    var timingLog: String?
}

/// When `record` stops by itself (help: "Length"); otherwise at Ctrl-C, SIGTERM, SIGHUP or q + Enter.
struct RecordLengthOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Stop after this many frames.", valueName: "n"))
    var frames: Int?

    @Option(help: ArgumentHelp("Stop after this long: seconds (90, 2.5) or 1m30s.", valueName: "time"),
            transform: parsed(ValueParsing.duration))
    var duration: MediaTime?
}
