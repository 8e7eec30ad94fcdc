// SegmentDelegateTests: segments in memory (AVAssetWriterDelegate).
//
// - testIntervalSegmentsConcatenatedDecodeEveryFrame: 150 frames at 30 fps, 1 s interval,
//   HLS and CMAF profiles: an initialization segment (ftyp + moov, no sample) then 5 media
//   segments (moof + mdat) of exactly 1 s (reports), each starting with a key frame (CMAF's
//   init segment has the cmfc brand); init + segments concatenated decode with
//   ffprobe -count_frames = 150 and `ffmpeg -v error -f null -` silent.
// - testFlushSegmentCutsWhereAsked: indefinite interval, flushSegment() before frames 20,
//   45 and 80: segments start there (reports, and ffprobe's key frames of the concatenation).
// - testSoundAndVideoInOneWriter: H.264 + AAC, 1 s segments: both tracks in every report,
//   the concatenation has both streams and decodes without an error, audio ≈ 3 s.
// - testSoundAndPicturesStayInStepWithBFrames: H.264 with B-frames (veryfast) + AAC, a
//   white picture at frames 15, 45 and 75 and a click at the same times: in the concatenated
//   segments each click within 2 ms of its flash (ffmpeg's signalstats and decoded PCM). Each
//   track had been moved to start at decode time 0 by itself: the sound 45 ms early.
// - testSetUpErrorsAreClear: a delegate on a file writer, a Matroska content type, no delegate,
//   no profile, flushSegment with an interval or on a file writer: clear errors.
import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// Keeps what the writer hands over, in order.
final class SegmentCollector: AssetWriterDelegate {
    let segments = Locked<[(data: Data, type: AssetSegmentType, report: AssetSegmentReport?, thread: String)]>([])

    func assetWriter(_ writer: AssetWriter, didOutputSegmentData segmentData: Data, segmentType: AssetSegmentType,
                     segmentReport: AssetSegmentReport?) {
        let name = Thread.current.name ?? ""
        segments.withLock { $0.append((segmentData, segmentType, segmentReport, name)) }
    }
}

final class SegmentDelegateTests: FileTestCase {
    static let settings = VideoSettings(width: 160, height: 120, maxKeyFrameInterval: 250, expectedSourceFrameRate: Rational(30),
                                        preset: "ultrafast", threads: 1)

    /// Writes `frames` frames at 30 fps through a segmenting writer, calling `before(i)` before frame i.
    func record(frames: Int, profile: FileTypeProfile = .mpeg4AppleHLS, interval: MediaTime,
                audio: Bool = false, flashes: Bool = false, settings: VideoSettings = SegmentDelegateTests.settings,
                before: (AssetWriter, Int) throws -> Void = { _, _ in }) async throws -> SegmentCollector {
        let collector = SegmentCollector()
        let writer = AssetWriter(contentType: .mp4)
        writer.outputFileTypeProfile = profile
        writer.preferredOutputSegmentInterval = interval
        writer.initialSegmentStartTime = .zero
        writer.delegate = collector
        let video = AssetWriterInput(outputSettings: settings)
        let adaptor = PixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        let sound = audio ? AssetWriterInput(outputSettings: AudioSettings(codec: .aac)) : nil
        if let sound { try writer.add(sound) }
        try writer.startWriting()
        try writer.startSession(atSourceTime: .zero)
        let format = AudioFormat(sampleType: .f32, sampleRate: 48_000, channelLayout: .stereo)
        var audioFrames = 0
        for i in 0..<frames {
            try before(writer, i)
            let b = try XCTUnwrap(adaptor.pixelBufferPool).makePixelBuffer()
            // With flashes: black pictures, white at frames 15, 45, 75, …, where the sound clicks.
            if flashes { fill(b, value: i % 30 == 15 ? 235 : 16) } else { fill(b, seed: UInt64(i + 1)) }
            try syncAppend(adaptor, b, MediaTime(value: Int64(i), timescale: 30))
            while let sound, audioFrames * 30 < (i + 1) * 48_000 {
                let tone = (0..<1600).flatMap { k in
                    let n = audioFrames + k, click = n % 48_000 - 24_000   // 2 ms of ±0.9 at 0.5 s, 1.5 s, …
                    let v: Float = flashes ? (0..<96).contains(click) ? (click % 8 < 4 ? 0.9 : -0.9) : 0.1 * Float(sin(Double(n) * 0.0576))
                        : 0.2 * Float(sin(Double(n) * 0.05))
                    return [Float](repeating: v, count: 2)
                }
                try await sound.append(try AudioSampleBuffer(format: format, presentationTimeStamp: MediaTime(value: Int64(audioFrames), timescale: 48_000),
                                                       interleaved: tone))
                audioFrames += 1600
            }
        }
        video.markAsFinished()
        sound?.markAsFinished()
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
        return collector
    }

    /// The segments concatenated into a file.
    func concatenate(_ collector: SegmentCollector, name: String) throws -> URL {
        let url = dir.appendingPathComponent(name)
        try collector.segments.withLock { $0.reduce(Data()) { $0 + $1.data } }.write(to: url)
        return url
    }

    /// The names of `data`'s top-level ISO BMFF boxes.
    func boxes(_ data: Data) -> [String] {
        let bytes = [UInt8](data)
        var names: [String] = [], offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            names.append(String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self))
            guard size >= 8 else { break }
            offset += size
        }
        return names
    }

    func assertDecodesCleanly(_ url: URL, frames: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let stream = try FF.probe(url.path).stream
        XCTAssertEqual(stream["nb_read_frames"] as? String, "\(frames)", file: file, line: line)
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", url.path, "-f", "null", "-"])
        XCTAssertTrue(r.succeeded, file: file, line: line)
        XCTAssertEqual(r.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "decoding errors", file: file, line: line)
    }

    func testIntervalSegmentsConcatenatedDecodeEveryFrame() async throws {
        for profile in [FileTypeProfile.mpeg4AppleHLS, .mpeg4CMAFCompliant] {
            let collector = try await record(frames: 150, profile: profile, interval: MediaTime(value: 1, timescale: 1))
            let segments = collector.segments.withLock { $0 }
            XCTAssertEqual(segments.map(\.type), [.initialization] + Array(repeating: .separable, count: 5), "\(profile)")
            XCTAssertNil(segments.first?.report)
            XCTAssertTrue(segments.allSatisfy { $0.thread == segments[0].thread }, "one thread delivers them all")
            for (n, segment) in segments.dropFirst().enumerated() {
                let video = try XCTUnwrap(segment.report?.trackReports.first { $0.mediaType == .video })
                XCTAssertEqual(video.trackID, 1)
                XCTAssertEqual(video.earliestPresentationTimeStamp, MediaTime(value: Int64(n), timescale: 1), "\(profile) segment \(n)")
                XCTAssertEqual(video.duration, MediaTime(value: 1, timescale: 1), "\(profile) segment \(n)")
                XCTAssertTrue(video.startsWithKeyFrame, "\(profile) segment \(n)")
                // FFmpeg 5.1's mp4 muxer writes no styp: each media segment is moof + mdat.
                XCTAssertEqual(String(decoding: segment.data.dropFirst(4).prefix(4), as: UTF8.self), "moof", "\(profile)")
            }
            XCTAssertEqual(String(decoding: segments[0].data.dropFirst(4).prefix(4), as: UTF8.self), "ftyp")
            // The initialization segment carries no sample (libavformat writes its moov with
            // the first fragment): ftyp and moov only; each media segment moof and mdat.
            XCTAssertEqual(boxes(segments[0].data), ["ftyp", "moov"], "\(profile)")
            XCTAssertTrue(segments.dropFirst().allSatisfy { boxes($0.data) == ["moof", "mdat"] }, "\(profile): \(segments.dropFirst().map { boxes($0.data) })")
            let ftyp = String(decoding: segments[0].data.prefix(Int(segments[0].data[3])).map { $0 < 32 || $0 > 126 ? UInt8(ascii: ".") : $0 }, as: UTF8.self)
            // CMAF: libavformat's cmaf flag adds the cmfc brand (HLS: iso5 iso6 mp41).
            XCTAssertEqual(ftyp.contains("cmfc"), profile == .mpeg4CMAFCompliant, ftyp)
            try assertDecodesCleanly(try concatenate(collector, name: "\(profile).mp4"), frames: 150)
        }
    }

    func testFlushSegmentCutsWhereAsked() async throws {
        let cuts = [20, 45, 80]
        let collector = try await record(frames: 100, interval: .indefinite) { writer, i in
            if cuts.contains(i) { try writer.flushSegment() }
        }
        let reports = collector.segments.withLock { $0.dropFirst().compactMap { $0.report?.trackReports.first } }
        XCTAssertEqual(reports.map { $0.earliestPresentationTimeStamp }, ([0] + cuts).map { MediaTime(value: Int64($0), timescale: 30) })
        XCTAssertEqual(reports.map { $0.duration }, [20, 25, 35, 20].map { MediaTime(value: Int64($0), timescale: 30) })
        let url = try concatenate(collector, name: "flushed.mp4")
        try assertDecodesCleanly(url, frames: 100)
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts,flags", "-of", "csv=p=0", url.path])
        let keys = r.stdout.split(separator: "\n").compactMap { line -> Int? in
            let f = line.split(separator: ",")
            return f.count >= 2 && f[1].hasPrefix("K") ? Int(f[0]) : nil
        }
        // The track's time base is a frame, 1/30 s (the muxer may scale it): key frames at the cuts.
        let frame = try XCTUnwrap(keys.dropFirst().first.map { $0 / 20 }, "\(keys)")
        XCTAssertEqual(keys.map { $0 / frame }, [0] + cuts, r.stdout)
    }

    func testSoundAndVideoInOneWriter() async throws {
        let collector = try await record(frames: 90, interval: MediaTime(value: 1, timescale: 1), audio: true)
        let segments = collector.segments.withLock { $0 }
        XCTAssertEqual(segments.count, 4)
        for segment in segments.dropFirst() {
            XCTAssertEqual(Set(segment.report?.trackReports.map(\.mediaType) ?? []), [.video, .audio])
        }
        let url = try concatenate(collector, name: "av.mp4")
        try assertDecodesCleanly(url, frames: 90)
        let audio = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name,duration", "-of", "default=nw=1", url.path])
        XCTAssertTrue(audio.stdout.contains("codec_name=aac"), audio.stdout)
        let samples = try AudioCheck.decode(url.path)
        XCTAssertEqual(Double(samples.count) / 48_000, 3, accuracy: 0.1)
    }

    func testSoundAndPicturesStayInStepWithBFrames() async throws {
        var settings = SegmentDelegateTests.settings
        settings.preset = "veryfast"   // B-frames: the pictures' decode times start before 0
        let collector = try await record(frames: 90, interval: MediaTime(value: 1, timescale: 1), audio: true, flashes: true, settings: settings)
        let url = try concatenate(collector, name: "sync.mp4")
        try assertDecodesCleanly(url, frames: 90)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=has_b_frames", "-of", "csv=p=0", url.path])
        XCTAssertGreaterThan(Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 0, "B-frames: \(probe.stdout)")
        let flashes = try AudioCheck.flashTimes(url.path, width: 160, height: 120)
        XCTAssertEqual(flashes.count, 3, "\(flashes)")
        let (pcm, start) = try AudioCheck.decodeTimed(url.path)
        let offsets = AudioCheck.offsets(flashes: flashes, clicks: AudioCheck.clickOnsets(pcm, rate: 48_000).map { $0 + start })
        XCTAssertEqual(offsets.count, 3)
        XCTAssertTrue(offsets.allSatisfy { abs($0) <= 0.002 }, "clicks on their flashes: \(offsets.map { ($0 * 1000).rounded() }) ms")
    }

    func testSetUpErrorsAreClear() throws {
        let collector = SegmentCollector()
        func refusal(_ writer: AssetWriter) throws -> SwiftRecordError {
            try writer.add(AssetWriterInput(outputSettings: SegmentDelegateTests.settings))
            do {
                try writer.startWriting()
            } catch {
                return error
            }
            writer.cancelWriting()
            throw TestError.failed("startWriting did not throw")
        }
        let file = AssetWriter(outputURL: dir.appendingPathComponent("f.mp4"), fileType: .mp4)
        file.delegate = collector
        XCTAssertTrue(try refusal(file).message.contains("AssetWriter(contentType:)"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("f.mp4").path))
        XCTAssertThrowsError(try file.flushSegment())

        let mkv = AssetWriter(contentType: .mkv)
        mkv.delegate = collector
        mkv.outputFileTypeProfile = .mpeg4AppleHLS
        let e = try refusal(mkv)
        XCTAssertEqual(e.kind, .unsupported)
        XCTAssertTrue(e.message.contains("fragmented MPEG-4"), e.message)

        let noDelegate = AssetWriter(contentType: .mp4)
        noDelegate.outputFileTypeProfile = .mpeg4AppleHLS
        XCTAssertTrue(try refusal(noDelegate).message.contains("set delegate"))

        let noProfile = AssetWriter(contentType: .mp4)
        noProfile.delegate = collector
        XCTAssertTrue(try refusal(noProfile).message.contains("outputFileTypeProfile"))

        let timed = AssetWriter(contentType: .mp4)
        timed.delegate = collector
        timed.outputFileTypeProfile = .mpeg4CMAFCompliant
        timed.preferredOutputSegmentInterval = MediaTime(value: 2, timescale: 1)
        XCTAssertThrowsError(try timed.flushSegment(), "before startWriting")
        try timed.add(AssetWriterInput(outputSettings: SegmentDelegateTests.settings))
        try timed.startWriting()
        XCTAssertThrowsError(try timed.flushSegment()) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.message.contains(".indefinite") == true, "\(error)")
        }
        timed.cancelWriting()
        XCTAssertEqual(collector.segments.withLock { $0.count }, 0, "the cancelled writer, with no sample, gave no segment (the moov comes with the first)")
    }
}
