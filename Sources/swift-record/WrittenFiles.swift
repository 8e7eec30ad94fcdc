import ArgumentParser
import Foundation
import SwiftRecord

/// Every file a `record` run writes, checked together against the rule for written files
/// (`OutputFile`) before anything is written or captured: follow symbolic links, write
/// only regular files, replace an existing file only with --overwrite (and only once the
/// new one is complete), never two outputs on one file. HLS outputs count with every name
/// they write (`HLSFiles`: playlist, temporary playlist, init segment, segment names).
/// Replay clips (`ReplayOptions`) and repaired files (`MediaRepair`) go through
/// `OutputFile` when they are made.
struct WrittenFiles {
    let output: OutputFile
    let statsJSON: OutputFile?
    let timingLog: OutputFile?
    /// `--restore-token`: replaced when the portal gives a new token, with or without -y.
    let restoreToken: OutputFile?
    let hls: [HLSFiles]

    init(output: String, statsJSON: String?, timingLog: String?, restoreToken: String? = nil, hlsPlaylists: [String] = [], hlsFragmentedMP4: Bool = false,
         overwrite: Bool) throws(SwiftRecordError) {
        self.output = try OutputFile(output, what: "--output", overwrite: overwrite)
        self.statsJSON = try statsJSON.map { (p) throws(SwiftRecordError) in try OutputFile(p, what: "--stats-json", overwrite: overwrite) }
        self.timingLog = try timingLog.map { (p) throws(SwiftRecordError) in try OutputFile(p, what: "--timing-log", overwrite: overwrite) }
        self.restoreToken = try restoreToken.map { (p) throws(SwiftRecordError) in try OutputFile(p, what: "--restore-token", overwrite: true) }
        hls = try hlsPlaylists.map { (p) throws(SwiftRecordError) in
            try HLSFiles(playlist: p, fragmentedMP4: hlsFragmentedMP4, overwrite: overwrite, what: "--output")
        }
        var all: [(what: String, file: OutputFile)] = [("output", self.output)]
        if let f = self.statsJSON { all.append(("--stats-json file", f)) }
        if let f = self.timingLog { all.append(("--timing-log file", f)) }
        if let f = self.restoreToken { all.append(("--restore-token file", f)) }
        try OutputFile.checkDistinct(outputs: all + hls.map { ("HLS playlist", $0.playlist) })
        try HLSFiles.checkDistinct(files: all, hls: hls)
    }
}

/// `-y` / `--overwrite`, the same for every command that writes a file.
struct OverwriteOption: ParsableArguments {
    @Flag(name: [.customShort("y"), .long],
          help: "Replace files that already exist (only regular files, and only once the new file is complete).")
    var overwrite = false
}
