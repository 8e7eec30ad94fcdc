import ArgumentParser
import Foundation
import SwiftRecord

/// `swift-record thumbnail`: pictures of a media file at given times, as PNG or JPEG files,
/// or a contact sheet of them, through `AssetImageGenerator`.
struct Thumbnail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",  // named, not derived from the type's name at every use (String(describing:))
        abstract: "Write pictures of a media file at given times as PNG or JPEG files, or a contact sheet of them.",
        discussion: """
        Times count from the file's start (its earliest time stamp), as ffmpeg's -ss and players count them. Frame-accurate: each picture is the one shown at its time (the decoder seeks to the key frame before and decodes forward), as a player shows it (a display matrix's quarter turns and mirrors applied, unless --no-transform). --tolerance lets a picture be up to that much earlier or later, which is faster (the key frame itself is often taken).

        Output: -o's extension picks the format (.png, .jpg or .jpeg); for several pictures -o is a pattern with %d (or %03d), numbered from 1 in the order asked. Without -o: NAME.png next to the input for one picture, NAME-1.png, NAME-2.png, … for several, NAME-sheet.png for a sheet. An existing file is replaced only with -y (once the new one is complete); nothing is written unless every time lies inside the file and every name can be written.

        --sheet CxR lays C columns and R rows of pictures of one size into one picture, left to right and top to bottom, without borders: the times of --at/--every (the first C×R of them), or else C×R times spread evenly over the file (the middles of C×R equal parts). Each tile is the picture scaled to 320 pixels wide (--size WxH: to fit inside WxH), aspect kept; the sheet is C × tile width by R × tile height, tiles without a picture (after the last picture of a file cut short) black.

        Exit status: 0 when every file was written; 2 when refused before writing (a time past the end, a file with no video, not a media file, an existing output without -y); 1 when writing failed (files written before stay, complete), or a time lies after the last picture of a file cut short (no picture is written for it; on a sheet its tile is black).

        EXAMPLES
          swift-record thumbnail recording.mkv --at 5s
              Writes recording.png, the picture shown at 5 s.
          swift-record thumbnail recording.mkv --at 1s,1m30s -o 'shot-%d.jpg' --size 640x360
          swift-record thumbnail recording.mkv --every 10s -o 'frames/%03d.png'
          swift-record thumbnail recording.mkv --sheet 4x4
              Writes recording-sheet.png: 16 pictures spread over the file, 1280 pixels wide.
        """
    )

    @Argument(help: ArgumentHelp("A media file with a video track (MP4, MKV, MOV, WebM, …).", valueName: "file"))
    var input: String

    @Option(help: ArgumentHelp("A time to take a picture at: 5, 2.5s, 1m30s, 0; several with commas or repeated --at.", valueName: "time"),
            transform: parsed(Thumbnail.parseTimes))
    var at: [[MediaTime]] = []

    @Option(help: ArgumentHelp("Take a picture every this long, from 0 to the end (at most \(Thumbnail.mostPictures) pictures): 10s, 1m.", valueName: "duration"),
            transform: parsed(ValueParsing.duration))
    var every: MediaTime?

    @Option(help: ArgumentHelp("A contact sheet of C columns and R rows, e.g. 4x4, in one picture.", valueName: "CxR"),
            transform: parsed(Thumbnail.parseGrid))
    var sheet: Grid?

    @Option(help: ArgumentHelp("Largest picture (or tile), WxH: scaled down to fit, aspect kept, never up.", valueName: "WxH"),
            transform: parsed(ValueParsing.size))
    var size: VideoSize?

    @Option(help: ArgumentHelp("How far from each time a picture may be (faster; default 0: frame-accurate): 2s, 500ms.", valueName: "duration"),
            transform: parsed(ValueParsing.durationOrZero))
    var tolerance: MediaTime?

    @Flag(name: .customLong("no-transform"), help: "Keep the pictures as stored: do not apply the track's display matrix (rotation, mirror).")
    var noTransform = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (.png, .jpg, .jpeg); a pattern with %d for several pictures.", valueName: "file"))
    var output: String?

    @Flag(name: .shortAndLong, help: "Only errors and warnings.")
    var quiet = false

    @OptionGroup var replace: OverwriteOption

    @OptionGroup(title: "Messages") var logging: LoggingOptions

    struct Grid: Sendable {
        let columns: Int
        let rows: Int
    }

    /// `5`, `2.5s`, `1m30s`, `0`, or several of them with commas.
    @Sendable static func parseTimes(_ text: String) throws(SwiftRecordError) -> [MediaTime] {
        var times: [MediaTime] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let t = part.trimmingCharacters(in: .whitespaces)
            do {
                times.append(try ValueParsing.durationOrZero(t))
            } catch {
                throw SwiftRecordError(.invalidArgument, operation: "--at",
                                       message: "'\(t)' is not a time; expected seconds (5, 2.5, 0) or hours, minutes and seconds (1m30s, 500ms), several with commas")
            }
        }
        return times
    }

    /// `4x4`: columns and rows, 1 to 32 each.
    @Sendable static func parseGrid(_ text: String) throws(SwiftRecordError) -> Grid {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let c = Int(parts[0]), let r = Int(parts[1]), (1...32).contains(c), (1...32).contains(r) else {
            throw SwiftRecordError(.invalidArgument, operation: "--sheet",
                                   message: "'\(text)' is not a grid; expected columns x rows, each 1 to 32 (4x4, 5x3)")
        }
        return Grid(columns: c, rows: r)
    }

    /// The default width of a contact sheet's tile.
    static let tileWidth = 320
    /// The most pictures one `--every` may ask for (a ten-hour file every 4 s).
    static let mostPictures = 10_000

    var requestedTimes: [MediaTime] { at.flatMap { $0 } }

    func validate() throws {
        if requestedTimes.isEmpty && every == nil && sheet == nil {
            throw ValidationError("say when: --at TIME, --every DURATION or --sheet CxR")
        }
        if let output {
            let ext = URL(fileURLWithPath: output).pathExtension
            guard ImageFileFormat(pathExtension: ext) != nil else {
                throw ValidationError("-o \(output): the extension picks the format; expected .png, .jpg or .jpeg")
            }
            if sheet == nil && every == nil && requestedTimes.count > 1 && Thumbnail.numberSlot(in: output) == nil {
                throw ValidationError("-o \(output) names one file for \(requestedTimes.count) pictures; put %d (or %03d) in it for their numbers")
            }
        }
    }

    func run() async throws {
        logging.bootstrap()
        let generator: AssetImageGenerator
        do {
            generator = try AssetImageGenerator(asset: URL(fileURLWithPath: input))
        } catch {
            note("swift-record thumbnail: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        generator.appliesPreferredTrackTransform = !noTransform
        if let tolerance {
            generator.requestedTimeToleranceBefore = tolerance
            generator.requestedTimeToleranceAfter = tolerance
        }
        if let size { generator.maximumSize = size } else if sheet != nil { generator.maximumSize = VideoSize(width: Thumbnail.tileWidth, height: 0) }
        let plan: [(time: MediaTime, file: OutputFile)]
        do {
            plan = try makePlan(generator)
        } catch {
            note("swift-record thumbnail: \(error.userMessage)")
            throw ExitStatus.beforeWriting(error)
        }
        if let sheet {
            try writeSheet(generator, sheet, plan)
            return
        }
        for (time, file) in plan {
            do throws(SwiftRecordError) {
                let (image, actual) = try generator.image(at: time)
                try file.writeImage(image)
                if !quiet {
                    note(String(format: "swift-record: wrote %@: %dx%d, the picture at %.3f s (asked %@ s)",
                                file.requestedPath, image.width, image.height, actual.seconds, time.secondsText))
                }
            } catch {
                note("swift-record thumbnail: \(error.userMessage)")
                throw ExitStatus.failed
            }
        }
    }

    /// The times and the files they go to, every name checked against the rules for
    /// written files before anything is written.
    private func makePlan(_ generator: AssetImageGenerator) throws(SwiftRecordError) -> [(time: MediaTime, file: OutputFile)] {
        let duration = generator.duration
        var times = requestedTimes
        if let every {
            guard let duration else {
                throw SwiftRecordError(.invalidData, operation: "--every", message: "\(input) does not say how long it is")
            }
            // A file's declared length is its own word: a crafted one (centuries) must not
            // make the loop below run for ever.
            let pictures = duration.seconds / every.seconds
            guard pictures <= Double(Thumbnail.mostPictures) else {
                throw SwiftRecordError(.invalidArgument, operation: "--every",
                                       message: String(format: "a picture every %@ s of %@ (%.3f s long) makes %.0f pictures; at most %d",
                                                       every.secondsText, input, duration.seconds, pictures, Thumbnail.mostPictures))
            }
            var t = MediaTime.zero
            while t < duration {
                times.append(t)
                t = t + every
            }
        }
        if let sheet {
            let count = sheet.columns * sheet.rows
            if times.isEmpty {
                guard let duration else {
                    throw SwiftRecordError(.invalidData, operation: "--sheet", message: "\(input) does not say how long it is; give the times with --at or --every")
                }
                // The middles of equal parts, in Int128: a file that says it lasts centuries
                // would overflow Int64 microseconds times the tile number.
                let micros = Int128(duration.convertScale(1_000_000).value)
                times = (0..<count).map { i in
                    MediaTime(value: Int64(micros * Int128(2 * i + 1) / Int128(2 * count)), timescale: 1_000_000)
                }
            } else if times.count > count {
                if !quiet { note("swift-record thumbnail: note: \(times.count) times for \(count) tiles; the sheet shows the first \(count)") }
                times = Array(times.prefix(count))
            }
        }
        if let duration, let late = times.first(where: { $0 > duration }) {
            throw SwiftRecordError(.invalidArgument, operation: "--at",
                                   message: String(format: "%@ s is past the end of %@ (%.3f s long)", late.secondsText, input, duration.seconds))
        }
        let names = outputNames(count: sheet == nil ? times.count : 1)
        let files = try names.map { (name) throws(SwiftRecordError) in try OutputFile(name, what: "output", overwrite: replace.overwrite) }
        var inputs: [(what: String, identity: FileIdentity)] = []
        if let identity = FileIdentity(path: input) { inputs.append(("input", identity)) }
        try OutputFile.checkDistinct(outputs: files.map { ("output", $0) }, inputs: inputs)
        if sheet != nil { return times.map { ($0, files[0]) } }
        return zip(times, files).map { ($0, $1) }
    }

    /// The output names: -o (its %d numbered from 1), or names next to the input.
    private func outputNames(count: Int) -> [String] {
        let stem: String = {
            let url = URL(fileURLWithPath: input)
            let base = url.deletingPathExtension().lastPathComponent
            let dir = input.contains("/") ? String(input[..<input.lastIndex(of: "/")!]) + "/" : ""
            return dir + base
        }()
        guard let output else {
            if sheet != nil { return [stem + "-sheet.png"] }
            return count == 1 ? [stem + ".png"] : (1...max(1, count)).map { "\(stem)-\($0).png" }
        }
        guard let slot = Thumbnail.numberSlot(in: output) else { return Array(repeating: output, count: count) }
        return (1...max(1, count)).map { n in
            let digits = String(n)
            let padded = String(repeating: "0", count: max(0, slot.width - digits.count)) + digits
            return output.replacingCharacters(in: slot.range, with: padded)
        }
    }

    /// Where `%d` or `%0Nd` is in `pattern`, and N.
    static func numberSlot(in pattern: String) -> (range: Range<String.Index>, width: Int)? {
        guard let range = pattern.range(of: #"%0?[0-9]?d"#, options: .regularExpression) else { return nil }
        let width = Int(pattern[range].dropFirst().dropLast()) ?? 0
        return (range, width)
    }

    private func writeSheet(_ generator: AssetImageGenerator, _ grid: Grid, _ plan: [(time: MediaTime, file: OutputFile)]) throws {
        guard let file = plan.first?.file else { return }
        let tile = generator.imageSize
        // A time after the last picture (a file cut short) leaves its tile black.
        var blank: [Int] = []
        do throws(SwiftRecordError) {
            let sheet = try PixelBuffer(width: tile.width * grid.columns, height: tile.height * grid.rows, pixelFormat: .rgb24)
            sheet.withWriteAccess { planes in
                let p = planes[0]
                for y in 0..<p.height { (p.baseAddress + y * p.bytesPerRow).initializeMemory(as: UInt8.self, repeating: 0, count: p.rowLength) }
            }
            for (index, entry) in plan.enumerated() {
                let image: PixelBuffer
                do throws(SwiftRecordError) {
                    image = try generator.image(at: entry.time).image
                } catch {
                    guard let end = generator.lastPictureEnd, entry.time > end else { throw error }
                    blank.append(index + 1)
                    continue
                }
                try place(image, in: sheet, x: (index % grid.columns) * tile.width, y: (index / grid.columns) * tile.height, tile: tile)
            }
            try file.writeImage(sheet)
            if !quiet {
                note("swift-record: wrote \(file.requestedPath): \(grid.columns)x\(grid.rows) tiles of \(tile.width)x\(tile.height), \(sheet.width)x\(sheet.height)")
            }
        } catch {
            note("swift-record thumbnail: \(error.userMessage)")
            throw ExitStatus.failed
        }
        if !blank.isEmpty {
            let end = generator.lastPictureEnd?.seconds ?? 0
            let declared = generator.duration.map { String(format: ", before the %.3f s it declares (cut short or damaged, or its video stops before its sound)", $0.seconds) } ?? ""
            note("swift-record thumbnail: tile\(blank.count == 1 ? "" : "s") \(blank.map(String.init).joined(separator: ", ")) left black: "
                 + String(format: "the pictures of %@ end at %.3f s%@", input, end, declared))
            throw ExitStatus.failed
        }
    }

    /// Copies `image` (rgb24) into `sheet` at (x, y), cut to the tile.
    private func place(_ image: PixelBuffer, in sheet: PixelBuffer, x: Int, y: Int, tile: VideoSize) throws(SwiftRecordError) {
        try image.withReadAccess { (src) throws(SwiftRecordError) in
            try sheet.withWriteAccess { (dst) throws(SwiftRecordError) in
                let s = src[0], d = dst[0]
                let w = min(image.width, tile.width) * 3
                for row in 0..<min(image.height, tile.height) {
                    (d.baseAddress + (y + row) * d.bytesPerRow + x * 3).copyMemory(from: s.baseAddress + row * s.bytesPerRow, byteCount: w)
                }
            }
        }
    }
}

extension OutputFile {
    /// Writes `picture` encoded as the file's extension says (PNG when it names no image
    /// format): the one way `thumbnail` and `screenshot` write a picture.
    func writeImage(_ picture: PixelBuffer) throws(SwiftRecordError) {
        let format = ImageFileFormat(pathExtension: URL(fileURLWithPath: path).pathExtension) ?? .png
        try write(AssetImageGenerator.encode(picture, format: format))
    }
}
