import Foundation
import TestSupport
import XCTest

// ConvertSubtitleTests: `convert` carries subtitle tracks and attachments where the output's
// container can, and names what it leaves out (issue 37, item 26). Inputs are made with the
// ffmpeg CLI; outputs are checked with ffprobe and ffmpeg, not with our reader.
//
// - testSubtitlesAndAttachmentsGoIntoMatroska: an MKV with two SubRip tracks (languages and
//   titles), an ASS track and a font attachment, converted with and without --copy into
//   .mkv: every subtitle track with its codec, language and title, its packets at the
//   input's times and durations, the font with its name, MIME type and bytes; no warning
//   from ffmpeg reading it.
// - testTextSubtitlesBecomeMovTextInMP4: the same into .mp4 (--copy): three mov_text
//   tracks, languages and names kept, the SubRip text as it was; the font is left out, said so.
// - testMovTextBecomesSubRipInMatroska: an MP4 with mov_text into .mkv (SubRip, the text and
//   times as they were) and into .mp4 (mov_text, packet for packet).
// - testWebMCarriesWebVTT: SubRip into .webm becomes WebVTT at the same times.
// - testStreamsLeftOutAreNamedWithTheReason: a MOV's timecode (data) track and an MKV's
//   attachment into .mp4: the plan and the warning (with -q too) name each and say why.
// - testASubtitleBeforeTheFirstPictureIsLeftOutAndSaid: a cue before the first picture is
//   left out and counted in a warning; the later one is kept.
// - testRepairKeepsSubtitlesAndAttachments: a cut-off MKV with subtitles and a font, repaired:
//   both kept.
final class ConvertSubtitleTests: CLITestCase {
    static let english = "1\n00:00:00,500 --> 00:00:01,250\nHello there\n\n2\n00:00:01,700 --> 00:00:02,900\nSecond line\n"
    static let french = "1\n00:00:00,400 --> 00:00:01,100\nBonjour\n\n2\n00:00:02,000 --> 00:00:02,800\nDeuxième\n"
    static let ass = """
        [Script Info]
        ScriptType: v4.00+

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: Default,Test Sans,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,1

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
        Dialogue: 0,0:00:00.30,0:00:01.20,Default,,0,0,0,,{\\i1}Styled{\\i0} one
        Dialogue: 0,0:00:01.50,0:00:02.60,Default,,0,0,0,,Two

        """
    /// The font's bytes: any bytes do (nothing draws with it), every value of a byte among them.
    static let fontBytes: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }

    /// An MKV with H.264, AAC, SubRip (eng "English", fre "Français"), ASS and a font.
    func makeSubtitledMatroska() throws -> String {
        let en = path("en.srt"), fr = path("fr.srt"), ass = path("s.ass"), font = path("font.ttf"), source = path("subs.mkv")
        try ConvertSubtitleTests.english.write(toFile: en, atomically: true, encoding: .utf8)
        try ConvertSubtitleTests.french.write(toFile: fr, atomically: true, encoding: .utf8)
        try ConvertSubtitleTests.ass.write(toFile: ass, atomically: true, encoding: .utf8)
        try Data(ConvertSubtitleTests.fontBytes).write(to: URL(fileURLWithPath: font))
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                       "-i", en, "-i", fr, "-i", ass, "-t", "3", "-map", "0", "-map", "1", "-map", "2", "-map", "3", "-map", "4",
                       "-c:v", "libx264", "-preset", "ultrafast", "-threads", "1", "-c:a", "aac", "-c:s:0", "subrip", "-c:s:1", "subrip",
                       "-c:s:2", "ass", "-metadata:s:s:0", "language=eng", "-metadata:s:s:0", "title=English",
                       "-metadata:s:s:1", "language=fre", "-metadata:s:s:1", "title=Français",
                       "-attach", font, "-metadata:s:t", "mimetype=application/x-truetype-font", source])
        return source
    }

    func convert(_ args: [String]) throws -> ProcessResult {
        try Proc.run(binary, ["convert"] + args, timeout: 180)
    }

    /// ffprobe's `-show_entries` of `path` as one dictionary per line of compact output.
    func probe(_ path: String, _ entries: String, select: String? = nil) throws -> [[String: String]] {
        let r = try Proc.run("ffprobe", ["-v", "error"] + (select.map { ["-select_streams", $0] } ?? [])
                             + ["-show_entries", entries, "-of", "compact", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.split(separator: "\n").map { line in
            Dictionary(line.split(separator: "|").dropFirst().compactMap { field -> (String, String)? in
                let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The subtitle packets of subtitle stream `n` (of that kind): start, from the first
    /// picture's (a re-encoded file may start its pictures later, past its sound's priming,
    /// as the input did), and duration, in milliseconds.
    func subtitleTimes(_ path: String, _ n: Int) throws -> [String] {
        let video = try probe(path, "packet=pts_time", select: "v:0").compactMap { $0["pts_time"].flatMap(Double.init) }.min() ?? 0
        func ms(_ s: String?) -> Int { Int(((s.flatMap(Double.init) ?? .nan) * 1000).rounded()) }
        return try probe(path, "packet=pts_time,duration_time,size", select: "s:\(n)")
            .filter { ($0["size"].flatMap(Int.init) ?? 0) > 2 }  // (an MP4's empty mov_text samples end the one before)
            .map { "\(ms($0["pts_time"]) - Int((video * 1000).rounded()))+\(ms($0["duration_time"]))" }
    }

    /// `ffmpeg -v warning -i path -f null -` says nothing.
    func assertReadsCleanly(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Proc.run("ffmpeg", ["-v", "warning", "-i", path, "-f", "null", "-"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stderr, "", "\(path): \(r.stderr)", file: file, line: line)
    }

    /// Subtitle stream `n` of `path` as SubRip text (ffmpeg's own conversion).
    func srt(_ path: String, _ n: Int) throws -> String {
        let r = try Proc.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:s:\(n)", "-f", "srt", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    /// The text lines of `srt(path, n)`, without its numbers and times.
    func srtText(_ path: String, _ n: Int) throws -> [String] {
        try srt(path, n).split(separator: "\n").map(String.init).filter { !$0.contains("-->") && Int($0) == nil }
    }

    func testSubtitlesAndAttachmentsGoIntoMatroska() throws {
        let source = try makeSubtitledMatroska()
        for (args, name) in [(["--copy"], "copy.mkv"), ([], "encoded.mkv")] {
            let out = path(name)
            let r = try convert([source, "-o", out] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("left out"), r.stderr)
            XCTAssertTrue(r.stderr.contains("track 2: subtitle subrip (eng, \"English\") → copied"), r.stderr)
            XCTAssertTrue(r.stderr.contains("attachment font.ttf (application/x-truetype-font, 5000 bytes) → copied"), r.stderr)
            let streams = try probe(out, "stream=index,codec_type,codec_name:stream_tags=language,title,filename,mimetype")
            XCTAssertEqual(streams.map { $0["codec_name"] ?? "" }, [args.isEmpty ? "h264" : "h264", "aac", "subrip", "subrip", "ass", "ttf"], "\(streams)")
            XCTAssertEqual(streams[2]["tag:language"], "eng")
            XCTAssertEqual(streams[2]["tag:title"], "English")
            XCTAssertEqual(streams[3]["tag:language"], "fre")
            XCTAssertEqual(streams[3]["tag:title"], "Français")
            XCTAssertEqual(streams[5]["tag:filename"], "font.ttf")
            XCTAssertEqual(streams[5]["tag:mimetype"], "application/x-truetype-font")
            for n in 0..<3 {
                let times = try subtitleTimes(out, n)
                XCTAssertEqual(times.count, 2, "\(name) s:\(n)")
                XCTAssertEqual(times, try subtitleTimes(source, n), "\(name) s:\(n)")
            }
            XCTAssertEqual(try srtText(out, 0), try srtText(source, 0))
            XCTAssertTrue(try srt(out, 2).contains("Styled</i> one"))
            // The font, extracted by ffmpeg, is the one attached.
            let dumped = path("dumped-\(name).ttf")
            _ = try Proc.run("ffmpeg", ["-v", "error", "-y", "-dump_attachment:t:0", dumped, "-i", out])
            XCTAssertEqual(try [UInt8](Data(contentsOf: URL(fileURLWithPath: dumped))), ConvertSubtitleTests.fontBytes)
            try assertReadsCleanly(out)
        }
    }

    func testTextSubtitlesBecomeMovTextInMP4() throws {
        let source = try makeSubtitledMatroska()
        let out = path("copy.mp4")
        let r = try convert([source, "--copy", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("track 2: subtitle subrip (eng, \"English\") → mov_text"), r.stderr)
        XCTAssertTrue(r.stderr.contains("stream 5: attachment ttf (font.ttf) → left out: a .mp4 file cannot carry attachments; .mkv can"), r.stderr)
        let streams = try probe(out, "stream=codec_name:stream_tags=language,handler_name")
        XCTAssertEqual(streams.map { $0["codec_name"] ?? "" }, ["h264", "aac", "mov_text", "mov_text", "mov_text"], "\(streams)")
        XCTAssertEqual(streams[2]["tag:language"], "eng")
        XCTAssertEqual(streams[2]["tag:handler_name"], "English")
        XCTAssertEqual(streams[3]["tag:language"], "fre")
        for n in 0..<3 { XCTAssertEqual(try subtitleTimes(out, n), try subtitleTimes(source, n), "s:\(n)") }
        XCTAssertEqual(try srt(out, 0), try srt(source, 0))
        XCTAssertEqual(try srt(out, 1), try srt(source, 1))
        try assertReadsCleanly(out)
    }

    func testMovTextBecomesSubRipInMatroska() throws {
        let srt = path("en.srt"), source = path("movtext.mp4")
        try ConvertSubtitleTests.english.write(toFile: srt, atomically: true, encoding: .utf8)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-i", srt, "-t", "3", "-map", "0", "-map", "1",
                       "-c:v", "libx264", "-preset", "ultrafast", "-threads", "1", "-c:s", "mov_text",
                       "-metadata:s:s:0", "language=eng", source])
        let mkv = path("out.mkv"), mp4 = path("out.mp4")
        let r = try convert([source, "-o", mkv])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("track 1: subtitle mov_text (eng) → subrip"), r.stderr)
        XCTAssertEqual(try probe(mkv, "stream=codec_name:stream_tags=language", select: "s").first?["codec_name"], "subrip")
        XCTAssertEqual(try probe(mkv, "stream=codec_name:stream_tags=language", select: "s").first?["tag:language"], "eng")
        XCTAssertEqual(try subtitleTimes(mkv, 0), ["500+750", "1700+1200"])
        XCTAssertEqual(try self.srt(mkv, 0), try self.srt(source, 0))
        try assertReadsCleanly(mkv)
        let c = try convert([source, "--copy", "-q", "-o", mp4])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertEqual(try probe(mp4, "packet=pts_time,duration_time,size", select: "s"),
                       try probe(source, "packet=pts_time,duration_time,size", select: "s"))
        try assertReadsCleanly(mp4)
    }

    func testWebMCarriesWebVTT() throws {
        let source = try makeSubtitledMatroska()
        let out = path("out.webm")
        let r = try convert([source, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("→ webvtt (a .webm file cannot carry subrip"), r.stderr)
        let streams = try probe(out, "stream=codec_name:stream_tags=language,title", select: "s")
        XCTAssertEqual(streams.map { $0["codec_name"] ?? "" }, ["webvtt", "webvtt", "webvtt"], "\(streams)")
        XCTAssertEqual(streams[1]["tag:title"], "Français")
        for n in 0..<3 { XCTAssertEqual(try subtitleTimes(out, n), try subtitleTimes(source, n), "s:\(n)") }
        XCTAssertEqual(try srtText(out, 0), try srtText(source, 0))
        try assertReadsCleanly(out)
    }

    func testStreamsLeftOutAreNamedWithTheReason() throws {
        let mov = path("timecode.mov")
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast",
                       "-threads", "1", "-timecode", "01:00:00:00", mov])
        XCTAssertEqual(try probe(mov, "stream=codec_type").last?["codec_type"], "data")
        let plan = try convert([mov, "--copy", "-o", path("tc.mp4")])
        XCTAssertEqual(plan.status, 0, plan.stderr)
        XCTAssertTrue(plan.stderr.contains("stream 1: data none") && plan.stderr.contains("→ left out: data streams are not converted"), plan.stderr)
        XCTAssertEqual(try probe(path("tc.mp4"), "stream=codec_type").map { $0["codec_type"] ?? "" }, ["video"])
        let source = try makeSubtitledMatroska()
        for args in [["--copy"], []] {
            let out = path("quiet\(args.count).mp4")
            let r = try convert([source, "-q", "-o", out] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
            let warning = r.stderr.split(separator: "\n").first { $0.contains("warning: left out") }.map(String.init) ?? ""
            XCTAssertTrue(warning.contains("attachment ttf (font.ttf)") && warning.contains("a .mp4 file cannot carry attachments"), r.stderr)
            XCTAssertFalse(warning.contains("subtitle"), r.stderr)
        }
    }

    /// A subtitle shown before the first picture (the output starts there) cannot be placed:
    /// left out and said, the later one kept.
    func testASubtitleBeforeTheFirstPictureIsLeftOutAndSaid() throws {
        let en = path("early.srt"), source = path("late-video.mkv"), out = path("late.mkv")
        try ConvertSubtitleTests.english.write(toFile: en, atomically: true, encoding: .utf8)
        try FF.ffmpeg(["-itsoffset", "1", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-i", en, "-t", "3",
                       "-map", "0", "-map", "1", "-c:v", "libx264", "-preset", "ultrafast", "-threads", "1", "-c:s", "subrip", source])
        let r = try convert([source, "--copy", "-q", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: 1 subtitle shown before the first picture or sound left out"), r.stderr)
        let packets = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "s", "-show_entries", "packet=pts_time",
                                               "-of", "csv=p=0", out]).stdout.split(separator: "\n")
        XCTAssertEqual(packets.count, 1, "the second subtitle is kept: \(packets)")
    }

    func testRepairKeepsSubtitlesAndAttachments() throws {
        let source = try makeSubtitledMatroska()
        let whole = path("whole.mkv"), cut = path("cut.mkv"), fixed = path("fixed.mkv")
        XCTAssertEqual(try convert([source, "--copy", "-q", "-o", whole]).status, 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count * 9 / 10).write(to: URL(fileURLWithPath: cut))
        let r = try Proc.run(binary, ["repair", cut, "-o", fixed], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let streams = try probe(fixed, "stream=codec_name:stream_tags=language,filename")
        XCTAssertEqual(streams.map { $0["codec_name"] ?? "" }, ["h264", "aac", "subrip", "subrip", "ass", "ttf"], "\(streams)")
        XCTAssertEqual(streams[3]["tag:language"], "fre")
        XCTAssertEqual(try subtitleTimes(fixed, 0), try subtitleTimes(source, 0))
        try assertReadsCleanly(fixed)
    }
}
