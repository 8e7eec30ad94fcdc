import AVFoundation
import Foundation
import TestSupport
import XCTest

/// The receivers of 2025 (`inputPixelBufferReceiver(for:pixelBufferAttributes:)`,
/// `inputReceiver(for:)`) write a movie as Apple's documentation writes one: buffers from the
/// receiver's pool filled as `CVMutablePixelBuffer`s, handed on as `CVReadOnlyPixelBuffer`s,
/// appended by `append(_:with:)` (suspending) and `appendImmediately(_:with:)`; sound through
/// a sample-buffer receiver. ffprobe and ffmpeg check the file: every frame, the duration,
/// both tracks, and the pictures' colours.
final class AppleReceiverTests: FileTestCase {
    static let width = 320, height = 240, frames = 60

    /// Frame `k`: blue on the left half, red on the right, a white bar at x = 4k.
    private static func fill(_ buffer: inout CVMutablePixelBuffer, frame k: Int) {
        buffer.accessUnsafeMutableRawPlaneBytes { planes in
            let (properties, bytes) = planes[0]
            for y in 0..<properties.height {
                for x in 0..<width {
                    let i = y * properties.bytesPerRow + x * 4
                    let bar = abs(x - 4 * k) < 6
                    bytes[i] = bar || x < width / 2 ? 230 : 20          // blue
                    bytes[i + 1] = bar ? 230 : 20                       // green
                    bytes[i + 2] = bar || x >= width / 2 ? 230 : 20     // red
                    bytes[i + 3] = 255
                }
            }
        }
    }

    func testReceiversWriteEveryFrameAndTheSound() async throws {
        let url = dir.appendingPathComponent("receivers.mov")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mov)
        let videoInput = AVAssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: Self.width, AVVideoHeightKey: Self.height,
        ])
        let audioInput = AVAssetWriterInput(mediaType: .audio, outputSettings: [
            AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2,
        ])
        let attributes = CVPixelBufferCreationAttributes(pixelFormatType: CVPixelFormatType(rawValue: kCVPixelFormatType_32BGRA),
                                                         size: CVImageSize(width: Self.width, height: Self.height))
        let pictures = writer.inputPixelBufferReceiver(for: videoInput, pixelBufferAttributes: attributes)
        let sound = writer.inputReceiver(for: audioInput)
        XCTAssertEqual(writer.inputs.count, 2, "each receiver attached its input")
        XCTAssertNil(pictures.pixelBufferPool, "no pool before startWriting(), as Apple's")
        XCTAssertTrue(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        let pool = try XCTUnwrap(pictures.pixelBufferPool)
        XCTAssertEqual(pool.pixelBufferAttributes, attributes)

        var immediate = 0
        for k in 0..<Self.frames {
            var buffer = try pool.makeMutablePixelBuffer()
            Self.fill(&buffer, frame: k)
            let frame = CVReadOnlyPixelBuffer(buffer)
            let time = CMTimeMake(value: Int64(k), timescale: 30)
            if k.isMultiple(of: 2), try pictures.appendImmediately(frame, with: time) {
                immediate += 1
            } else {
                try await pictures.append(frame, with: time)
            }
        }
        XCTAssertGreaterThan(immediate, 0, "appendImmediately took frames when the input had room")
        // A time that does not increase is refused with an error, and the writer goes on.
        var late = try pool.makeMutablePixelBuffer()
        Self.fill(&late, frame: 0)
        do {
            try await pictures.append(CVReadOnlyPixelBuffer(late), with: CMTimeMake(value: 1, timescale: 30))
            XCTFail("a time before the last one was accepted")
        } catch {}
        pictures.finish()

        let format = AudioFormat(sampleType: .s16, sampleRate: 48_000, channelLayout: .stereo)
        for chunk in 0..<(2 * 48_000 / 1024) {
            var samples = [Int16](repeating: 0, count: 1024 * 2)
            for i in 0..<1024 {
                let v = Int16(8_000 * sin(2 * Double.pi * 440 * Double(chunk * 1024 + i) / 48_000))
                (samples[2 * i], samples[2 * i + 1]) = (v, v)
            }
            let sampleBuffer = CMSampleBuffer.audio(try AudioSampleBuffer(format: format, presentationTimeStamp: CMTimeMake(value: Int64(chunk * 1024), timescale: 48_000),
                                                                          interleaved: samples))
            if try !sound.appendImmediately(sampleBuffer) { try await sound.append(sampleBuffer) }
        }
        sound.finish()
        await writer.finishWriting()
        XCTAssertEqual(writer.status, .completed, "\(String(describing: writer.error))")

        let probe = try Proc.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                             "stream=codec_type,codec_name,width,height,nb_read_frames:format=duration", "-of", "json", url.path])
        XCTAssertTrue(probe.succeeded, probe.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video", "audio"])
        XCTAssertEqual(int(streams[0]["nb_read_frames"]), Self.frames)
        XCTAssertEqual(int(streams[0]["width"]), Self.width)
        let duration = try XCTUnwrap(Double((json["format"] as? [String: Any])?["duration"] as? String ?? ""))
        XCTAssertEqual(duration, 2, accuracy: 0.1)
        let (r1, _, b1) = try FF.rgb(url.path, x: 60, y: 120, at: 1.0)
        XCTAssertGreaterThan(b1, 180, "blue on the left")
        XCTAssertLessThan(r1, 60, "blue on the left")
        let (r2, _, b2) = try FF.rgb(url.path, x: 300, y: 120, at: 1.0)
        XCTAssertGreaterThan(r2, 180, "red on the right")
        XCTAssertLessThan(b2, 60, "red on the right")
        let pcm = try AudioCheck.decode(url.path)
        XCTAssertGreaterThan(AudioCheck.medianToneShare(pcm[24_000..<72_000], frequency: 440), 0.8)
    }

    func testAReceiverOfAnUnknownFormatRefusesWithTheReason() async throws {
        let writer = try AVAssetWriter(outputURL: dir.appendingPathComponent("refused.mp4"), fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 64, AVVideoHeightKey: 64])
        let receiver = writer.inputPixelBufferReceiver(for: input, pixelBufferAttributes: CVPixelBufferCreationAttributes(
            pixelFormatType: CVPixelFormatType(rawValue: 0x6162_6364), size: CVImageSize(width: 64, height: 64)))
        XCTAssertTrue(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        XCTAssertNil(receiver.pixelBufferPool)
        let frame = CVReadOnlyPixelBuffer(try CVMutablePixelBuffer(CVPixelBufferCreationAttributes(
            pixelFormatType: CVPixelFormatType(rawValue: kCVPixelFormatType_32BGRA), size: CVImageSize(width: 64, height: 64))))
        XCTAssertThrowsError(try receiver.appendImmediately(frame, with: .zero)) { error in
            XCTAssertTrue("\(error)".contains("abcd"), "\(error)")
        }
        XCTAssertThrowsError(try CVMutablePixelBuffer(CVPixelBufferCreationAttributes(
            pixelFormatType: CVPixelFormatType(rawValue: 0x6162_6364), size: CVImageSize(width: 64, height: 64))).size)
        receiver.finish()
        await writer.finishWriting()
    }
}
