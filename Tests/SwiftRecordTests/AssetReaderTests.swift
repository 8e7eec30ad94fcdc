import Foundation
import SwiftRecord
import TestSupport
import XCTest

// AssetReaderTests: the reading half (AssetReader, AssetReaderTrackOutput) and pass-through
// writer inputs, checked with ffprobe and ffmpeg's framemd5.
//
// - testTracksDescribeTheFile: tracks, codecs, sizes, rate, time base and duration of an MKV.
// - testTranscodeLoopConvertsMKVToMP4: Apple's reader → writer loop (decoded video and
//   audio re-encoded) gives an MP4 that decodes cleanly with the same frames and duration.
// - testPassThroughIsPacketIdentical: compressed samples into pass-through inputs (MKV →
//   MP4): every packet's bytes equal the source's, per stream; decoded frames identical.
// - testCompressedSamplesKeepTimesAndKeyFrames: key flags and times of compressed samples
//   are the file's (ffprobe -show_packets).
// - testTimeRangeReadsExactlyTheFramesInRange: decoded pictures of [1 s, 1.5 s) are the 15
//   frames ffmpeg decodes there, sound cut to the sample.
// - testPassThroughOfH264IntoWebMIsRefused: canAdd false, add names codec and container,
//   nothing written.
// - testGarbageAndTruncatedInputAreClearErrors: a file of noise, and an MKV cut inside its
//   header, throw an error naming the file.
// - testAsyncSequenceAndCancel: `for try await` reads every sample; cancelReading ends it.
// - testAReadWaitingOnAQuietPipeHoldsUpNeitherStatusNorCancel (issue 38): a Y4M stream in a
//   FIFO, 30 pictures then quiet with the pipe open; while a thread's read of the 31st waits
//   on the pipe, `status` answers `.reading` at once (before: it waited behind that read,
//   under the reader's lock, for as long as the pipe stayed quiet: 5 s here, then failed),
//   and `cancelReading()` ends the read: 30 samples, then nil, `.cancelled`.
final class AssetReaderTests: FileTestCase {
    static let frames = 60
    static let size = (width: 320, height: 240)

    /// An MKV of 2 s: H.264 with B-frames at 30 fps and AAC stereo at 48 kHz (ffmpeg's lavfi).
    func makeSource(_ name: String = "src.mkv") throws -> String {
        let p = path(name)
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                       "-t", "2", "-c:v", "libx264", "-threads", "1", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p",
                       "-c:a", "aac", "-ac", "2", "-shortest", p])
        return p
    }

    /// framemd5 hash lines of stream `stream` (ffmpeg's stream index column).
    func hashes(_ lines: [String], stream: Int) -> [String] {
        lines.filter { $0.split(separator: ",").first.map { Int($0.trimmingCharacters(in: .whitespaces)) } == stream }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func testTracksDescribeTheFile() throws {
        let reader = try AssetReader(path: try makeSource())
        XCTAssertEqual(reader.tracks.count, 2)
        let video = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let audio = try XCTUnwrap(reader.tracks.first { $0.mediaType == .audio })
        XCTAssertEqual(video.codecName, "h264")
        XCTAssertEqual(video.naturalSize, VideoSize(width: 320, height: 240))
        XCTAssertEqual(video.timeScale, Rational(1, 1000))
        XCTAssertEqual(audio.codecName, "aac")
        XCTAssertEqual(audio.sampleRate, 48_000)
        XCTAssertEqual(audio.channelCount, 2)
        XCTAssertEqual(reader.duration?.seconds ?? 0, 2, accuracy: 0.1)
        XCTAssertTrue(reader.containerName.contains("matroska"))
    }

    /// Apple's transcode loop: one output and one input per track, samples copied across
    /// until every output is drained.
    func transcode(_ source: String, to output: String, fileType: FileType, decode: Bool) async throws {
        let reader = try AssetReader(path: source)
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: output), fileType: fileType)
        var pairs: [(AssetReaderTrackOutput, AssetWriterInput)] = []
        for track in reader.tracks {
            let out: AssetReaderTrackOutput
            let input: AssetWriterInput
            switch (decode, track.mediaType) {
            case (false, _):
                out = AssetReaderTrackOutput(track: track, outputSettings: nil)
                input = try AssetWriterInput(mediaType: track.mediaType, outputSettings: nil, sourceFormatHint: track.formatDescription)
            case (true, .video):
                out = AssetReaderTrackOutput(track: track, outputSettings: .video(pixelFormat: .yuv420p))
                var settings = VideoSettings(width: track.naturalSize.width, height: track.naturalSize.height,
                                             rateControl: .constantQuality(20), expectedSourceFrameRate: track.nominalFrameRate)
                settings.threads = 1
                input = AssetWriterInput(outputSettings: settings)
            case (true, .audio):
                out = AssetReaderTrackOutput(track: track, outputSettings: .audio(AudioFormat(sampleType: .f32, isPlanar: true, sampleRate: 48_000, channelLayout: .stereo)))
                input = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings())
            case (true, .subtitle):
                continue  // (not one of `tracks`: subtitles are `subtitleTracks`)
            }
            try reader.add(out)
            XCTAssertTrue(writer.canAdd(input))
            try writer.add(input)
            pairs.append((out, input))
        }
        try writer.startWriting()
        try reader.startReading()
        try writer.startSession(atSourceTime: .zero)
        // Interleaved: a little of each track in turn, as the file holds them.
        var open = Array(pairs.indices)
        while !open.isEmpty {
            for i in open {
                let (out, input) = pairs[i]
                var n = 0
                while n < 8, let sample = try out.copyNextSampleBuffer() {
                    try await input.append(sample)
                    n += 1
                }
                if n < 8 {
                    input.markAsFinished()
                    open.removeAll { $0 == i }
                }
            }
        }
        XCTAssertEqual(reader.status, .completed)
        try await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed)
    }

    func testTranscodeLoopConvertsMKVToMP4() async throws {
        let source = try makeSource()
        let output = path("out.mp4")
        try await transcode(source, to: output, fileType: .mp4, decode: true)
        let probed = try FF.probe(output)
        XCTAssertEqual(int(probed.stream["nb_read_frames"]), AssetReaderTests.frames)
        XCTAssertEqual(probed.stream["codec_name"] as? String, "h264")
        XCTAssertEqual(double(probed.format["duration"]) ?? 0, 2, accuracy: 0.05)
        let decoded = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "null", "-"])
        XCTAssertTrue(decoded.succeeded && decoded.stderr.isEmpty, "decoding reported: \(decoded.stderr)")
        let audio = try AudioCheck.decode(output)
        XCTAssertEqual(Double(audio.count) / 48_000, 2, accuracy: 0.05)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(audio[4800..<(audio.count - 4800)], frequency: 440), 0.9)
    }

    func testPassThroughIsPacketIdentical() async throws {
        let source = try makeSource()
        let output = path("copy.mp4")
        try await transcode(source, to: output, fileType: .mp4, decode: false)
        let a = try FF.framemd5(source, outputArgs: ["-c", "copy"])
        let b = try FF.framemd5(output, outputArgs: ["-c", "copy"])
        for stream in 0...1 {
            let (x, y) = (hashes(a, stream: stream), hashes(b, stream: stream))
            XCTAssertFalse(x.isEmpty)
            XCTAssertEqual(x, y, "stream \(stream): the packets differ")
        }
        let decodedA = try FF.framemd5(source, outputArgs: ["-map", "0:v", "-threads", "1"])
        let decodedB = try FF.framemd5(output, outputArgs: ["-map", "0:v", "-threads", "1"])
        XCTAssertEqual(FF.hashes(decodedA).count, AssetReaderTests.frames)
        XCTAssertEqual(FF.hashes(decodedA), FF.hashes(decodedB), "decoded pictures differ")
    }

    func testCompressedSamplesKeepTimesAndKeyFrames() throws {
        let source = try makeSource()
        let reader = try AssetReader(path: source)
        let track = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let out = AssetReaderTrackOutput(track: track, outputSettings: nil)
        try reader.add(out)
        try reader.startReading()
        var read: [(pts: Int64, key: Bool, size: Int)] = []
        var lastDecode = MediaTime.negativeInfinity
        while case .compressed(let s)? = try out.copyNextSampleBuffer() {
            read.append((s.presentationTimeStamp.convertScale(1000).value, s.isKeyFrame, s.dataLength))
            XCTAssertGreaterThan(s.decodeTimeStamp, lastDecode, "decode times increase")
            XCTAssertLessThanOrEqual(s.decodeTimeStamp, s.presentationTimeStamp)
            lastDecode = s.decodeTimeStamp
        }
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts,flags,size", "-of", "csv=p=0", source])
        let expected = r.stdout.split(separator: "\n").map { line -> (Int64, Bool, Int) in
            let f = line.split(separator: ",")
            return (Int64(f[0]) ?? -1, f[2].hasPrefix("K"), Int(f[1]) ?? -1)
        }
        XCTAssertEqual(read.count, expected.count)
        XCTAssertEqual(read.map(\.pts), expected.map(\.0))
        XCTAssertEqual(read.map(\.key), expected.map(\.1))
        XCTAssertEqual(read.map(\.size), expected.map(\.2))
        XCTAssertEqual(reader.status, .completed)
    }

    func testTimeRangeReadsExactlyTheFramesInRange() throws {
        let source = try makeSource()
        let reader = try AssetReader(path: source)
        let video = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let audio = try XCTUnwrap(reader.tracks.first { $0.mediaType == .audio })
        let vOut = AssetReaderTrackOutput(track: video, outputSettings: .video(pixelFormat: .gray))
        let pcm = AudioFormat(sampleType: .s16, sampleRate: 48_000, channelLayout: .mono)
        let aOut = AssetReaderTrackOutput(track: audio, outputSettings: .audio(pcm))
        try reader.add(vOut)
        try reader.add(aOut)
        reader.timeRange = TimeRange(start: MediaTime(value: 1000, timescale: 1000), duration: MediaTime(value: 500, timescale: 1000))
        try reader.startReading()
        var times: [Double] = []
        var luma: [[UInt8]] = []
        while let s = try vOut.copyNextSampleBuffer() {
            times.append(s.presentationTimeStamp.seconds)
            let buffer = try XCTUnwrap(s.pixelBuffer)
            luma.append(buffer.withReadAccess { planes in
                (0..<buffer.height).flatMap { y in
                    Array(UnsafeBufferPointer(start: planes[0].baseAddress.assumingMemoryBound(to: UInt8.self) + y * planes[0].bytesPerRow, count: buffer.width))
                }
            })
        }
        XCTAssertEqual(times.count, 15, "frames in [1 s, 1.5 s) at 30 fps: \(times)")
        XCTAssertTrue(times.allSatisfy { $0 >= 1 && $0 < 1.5 }, "\(times)")
        // The same frames, decoded by ffmpeg: the 31st to the 45th.
        let reference = try FF.framemd5(source, outputArgs: ["-map", "0:v", "-vf", "select='between(n,30,44)'", "-vsync", "0", "-pix_fmt", "gray", "-threads", "1"])
        let raw = path("range.gray")
        try Data(luma.joined()).write(to: URL(fileURLWithPath: raw))
        let ours = try FF.framemd5(raw, inputArgs: ["-f", "rawvideo", "-pix_fmt", "gray", "-s", "320x240"], outputArgs: [])
        XCTAssertEqual(FF.hashes(ours), FF.hashes(reference))
        var samples = 0
        var first: MediaTime?
        while case .audio(let a)? = try aOut.copyNextSampleBuffer() {
            if first == nil { first = a.presentationTimeStamp }
            samples += a.frameCount
        }
        XCTAssertEqual(first, MediaTime(value: 48_000, timescale: 48_000))
        XCTAssertEqual(samples, 24_000, "half a second of sound, to the sample")
        XCTAssertEqual(reader.status, .completed)
    }

    func testPassThroughOfH264IntoWebMIsRefused() throws {
        let reader = try AssetReader(path: try makeSource())
        let video = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let output = path("out.webm")
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: output), fileType: .webm)
        let input = try AssetWriterInput(mediaType: .video, outputSettings: nil, sourceFormatHint: video.formatDescription)
        XCTAssertFalse(writer.canAdd(input))
        XCTAssertThrowsError(try writer.add(input)) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .unsupported)
            XCTAssertTrue(e?.message.contains("webm") == true && e?.message.contains("h264") == true, "\(String(describing: e))")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertThrowsError(try AssetWriterInput(mediaType: .video, outputSettings: nil, sourceFormatHint: nil))
    }

    func testGarbageAndTruncatedInputAreClearErrors() throws {
        let garbage = path("noise.mkv")
        // The same noise every run (random bytes are now and then taken for MPEG audio).
        var seed: UInt32 = 12_345
        let noise = (0..<65_536).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }
        try Data(noise).write(to: URL(fileURLWithPath: garbage))
        XCTAssertThrowsError(try AssetReader(path: garbage)) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .invalidData)
            XCTAssertTrue(e?.description.contains(garbage) == true, "\(String(describing: e))")
        }
        let source = try makeSource()
        let cut = path("cut.mkv")
        try Data(try Data(contentsOf: URL(fileURLWithPath: source)).prefix(200)).write(to: URL(fileURLWithPath: cut))
        XCTAssertThrowsError(try AssetReader(path: cut)) { error in
            XCTAssertTrue((error as? SwiftRecordError)?.description.contains(cut) == true, "\(error)")
        }
        XCTAssertThrowsError(try AssetReader(path: path("missing.mkv"))) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .io, "a missing file is no damaged one: \(String(describing: e))")
            XCTAssertTrue(e?.message.contains("No such file") == true, "\(String(describing: e))")
        }
    }

    func testAsyncSequenceAndCancel() async throws {
        let source = try makeSource()
        let reader = try AssetReader(path: source)
        let video = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let out = AssetReaderTrackOutput(track: video, outputSettings: .video(pixelFormat: .yuv420p, size: VideoSize(width: 160, height: 120)))
        try reader.add(out)
        XCTAssertFalse(reader.canAdd(out))
        try reader.startReading()
        var n = 0
        for try await sample in out.samples {
            XCTAssertEqual(sample.pixelBuffer?.width, 160)
            n += 1
            if n == 10 { reader.cancelReading() }
        }
        XCTAssertEqual(n, 10)
        XCTAssertEqual(reader.status, .cancelled)
        XCTAssertNil(try out.copyNextSampleBuffer())
    }

    func testAReadWaitingOnAQuietPipeHoldsUpNeitherStatusNorCancel() throws {
        let fifo = path("quiet.y4m")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        var stream = Data("YUV4MPEG2 W16 H16 F30:1 Ip A1:1 C420jpeg\n".utf8)
        for i in 0..<30 {
            stream.append(Data("FRAME\n".utf8))
            stream.append(Data(repeating: UInt8(i * 8), count: 16 * 16 * 3 / 2))
        }
        let data = stream
        // The writer: the header and 30 pictures, then quiet, the pipe open until the end.
        let quiet = Locked(true)
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            handle.write(data)
            _ = quiet.wait { $0 ? nil : true }
            try? handle.close()
        }
        writer.start()
        defer { quiet.withLockNotifying { $0 = false } }
        let reader = try AssetReader(path: fifo)
        let video = try XCTUnwrap(reader.tracks.first { $0.mediaType == .video })
        let out = AssetReaderTrackOutput(track: video, outputSettings: .video(pixelFormat: .yuv420p, size: VideoSize(width: 16, height: 16)))
        try reader.add(out)
        try reader.startReading()
        let read = Locked((samples: 0, ended: false))
        let reading = Thread {
            while (try? out.copyNextSampleBuffer()) != nil { read.withLockNotifying { $0.samples += 1 } }
            read.withLockNotifying { $0.ended = true }
        }
        reading.start()
        let deadline = { MonotonicClock.nanoseconds() + 10_000_000_000 }
        XCTAssertNotNil(read.wait(untilNanoseconds: deadline()) { $0.samples >= 30 ? true : nil }, "the 30 pictures written: \(read[\.samples])")
        // The read of the 31st now waits on the quiet pipe.
        usleep(200_000)
        let answered = Locked<AssetReader.Status?>(nil)
        Thread { let status = reader.status; answered.withLockNotifying { $0 = status } }.start()
        let status = answered.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 5_000_000_000) { $0 }
        XCTAssertEqual(status, .reading, "status waited behind a read blocked on the pipe")
        reader.cancelReading()
        XCTAssertNotNil(read.wait(untilNanoseconds: deadline()) { $0.ended ? true : nil }, "the blocked read ended with the cancel")
        XCTAssertEqual(read[\.samples], 30)
        XCTAssertEqual(reader.status, .cancelled)
        XCTAssertNil(try out.copyNextSampleBuffer())
    }
}
