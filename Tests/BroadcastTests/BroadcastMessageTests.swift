import Foundation
import TestSupport
import XCTest
@testable import SwiftRecordBroadcast

/// The wire protocol's parser on its own: every message round-trips, and malformed,
/// truncated, oversized and out-of-range datagrams are refused with what was wrong.
final class BroadcastMessageTests: XCTestCase {
    static let hello = BroadcastMessage.Hello(pid: 42, width: 1920, height: 1080, frameRateNumerator: 30, frameRateDenominator: 1,
                                              sampleRate: 48_000, channels: 2, name: "demo")

    func testEveryMessageRoundTrips() throws {
        let messages: [BroadcastMessage] = [
            .hello(Self.hello), .frame(index: 5, time: 123_456_789),
            .sound(.init(kind: .microphone, time: 99, channels: 2, samples: [1, 2, 3, 4, 5, 6, 7, 8])),
            .paused, .resumed, .finished,
            .welcome(SharedPictureRing.layout(width: 1920, height: 1080, count: 6)), .release(index: 3), .refused(reason: "taken"),
        ]
        for m in messages {
            XCTAssertEqual(try BroadcastMessage.parse(m.encoded), m)
        }
    }

    /// Bytes 8…11 of the header: the body's length.
    private func withLength(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        var b = bytes
        for i in 0..<4 { b[8 + i] = UInt8(truncatingIfNeeded: length >> (8 * i)) }
        return b
    }

    /// A message whose body is `body` under the header of `type`.
    private func message(type: UInt16, body: [UInt8]) -> [UInt8] {
        var b = BroadcastMessage.paused.encoded
        b[6] = UInt8(type & 0xff); b[7] = UInt8(type >> 8)
        return withLength(b + body, body.count)
    }

    private func helloBytes(_ change: (inout BroadcastMessage.Hello) -> Void) -> [UInt8] {
        var h = Self.hello
        change(&h)
        return BroadcastMessage.hello(h).encoded
    }

    private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    private func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    func testHostileMessagesAreRefusedNamingTheField() {
        let frame = BroadcastMessage.frame(index: 1, time: 10).encoded
        let sound = BroadcastMessage.sound(.init(kind: .app, time: 1, channels: 1, samples: [0, 0])).encoded
        var badMagic = frame; badMagic[0] ^= 0xff
        var badVersion = frame; badVersion[4] = 9
        var reservedFrame = frame; reservedFrame[16] = 1
        var badKind = sound; badKind[12] = 3
        var noChannels = sound; noChannels[13] = 0
        var reservedSound = sound; reservedSound[14] = 1
        var zeroFrames = sound; zeroFrames[16] = 0
        var manyFrames = sound; manyFrames[16...19] = ArraySlice(le32(100_000))
        var negativeSoundTime = sound; negativeSoundTime[20...27] = ArraySlice(le64(UInt64.max))
        let cases: [(String, [UInt8], String)] = [
            ("empty", [], "at least the 12-byte header"),
            ("half a header", Array(frame.prefix(7)), "at least the 12-byte header"),
            ("oversized", [UInt8](repeating: 0, count: BroadcastMessage.maximumMessageSize + 1), "at most"),
            ("bad magic", badMagic, "bad magic"),
            ("other version", badVersion, "protocol version 9"),
            ("unknown type", message(type: 99, body: []), "unknown message type 99"),
            ("type 0", message(type: 0, body: []), "unknown message type 0"),
            ("length says more", withLength(frame, 40), "header says a 40-byte body"),
            ("length says less", withLength(frame, 2), "header says a 2-byte body"),
            ("truncated frame", withLength(Array(frame.prefix(18)), 6), "message ends after"),
            ("trailing bytes", withLength(frame + [0], 17), "1 bytes after"),
            ("index out of range", BroadcastMessage.frame(index: 16, time: 1).encoded, "buffer index 16"),
            ("huge index", BroadcastMessage.frame(index: Int(UInt32.max), time: 1).encoded, "buffer index"),
            ("negative frame time", BroadcastMessage.frame(index: 0, time: -5).encoded, "frame time -5"),
            ("frame reserved field", reservedFrame, "reserved field is not 0"),
            ("sound kind 3", badKind, "sound type 3"),
            ("sound of 0 channels", noChannels, "0 channels"),
            ("sound reserved field", reservedSound, "reserved field is not 0"),
            ("sound of 0 frames", zeroFrames, "0 sound frames"),
            ("sound of too many frames", manyFrames, "100000 sound frames"),
            ("sound shorter than said", withLength(Array(sound.dropLast(1)), sound.count - 13), "sound carries 1 bytes"),
            ("sound longer than said", withLength(sound + [0, 0], sound.count - 10), "sound carries 4 bytes"),
            ("negative sound time", negativeSoundTime, "sound time -1"),
            ("odd width", helloBytes { $0.width = 1921 }, "picture size 1921x1080"),
            ("zero height", helloBytes { $0.height = 0 }, "picture size 1920x0"),
            ("huge picture", helloBytes { $0.width = 65_536 }, "picture size"),
            ("zero frame rate", helloBytes { $0.frameRateNumerator = 0 }, "frame rate 0/1"),
            ("zero rate denominator", helloBytes { $0.frameRateDenominator = 0 }, "frame rate 30/0"),
            ("absurd frame rate", helloBytes { $0.frameRateNumerator = 1_000_000 }, "frame rate 1000000/1"),
            ("sample rate 0", helloBytes { $0.sampleRate = 0 }, "sound 0 Hz"),
            ("9 channels", helloBytes { $0.channels = 9 }, "9 channels"),
            ("pid 0", helloBytes { $0.pid = 0 }, "pid 0"),
            ("negative pid", helloBytes { $0.pid = -1 }, "pid -1"),
            ("empty name", helloBytes { $0.name = "" }, "name of 0 bytes"),
            ("control characters in the name", helloBytes { $0.name = "a\u{1}b" }, "not printable"),
            ("name longer than its bytes", withLength(Array(helloBytes { _ in }.dropLast(2)), 30), "message ends after"),
            ("one ring buffer", BroadcastMessage.welcome(.init(count: 1, size: 100, strides: [1, 1, 1], offsets: [0, 0, 0])).encoded, "1 buffers"),
            ("ring of 17", BroadcastMessage.welcome(.init(count: 17, size: 100, strides: [1, 1, 1], offsets: [0, 0, 0])).encoded, "17 buffers"),
            ("plane past the buffer", BroadcastMessage.welcome(.init(count: 2, size: 100, strides: [1, 1, 1], offsets: [0, 0, 100])).encoded, "does not fit"),
            ("release out of range", BroadcastMessage.release(index: 99).encoded, "release of buffer 99"),
        ]
        XCTAssertGreaterThanOrEqual(cases.count, 30)
        for (name, bytes, expected) in cases {
            XCTAssertThrowsError(try BroadcastMessage.parse(bytes), name) { error in
                let text = (error as? BroadcastProtocolError)?.message ?? "\(error)"
                XCTAssertTrue(text.contains(expected), "\(name): '\(text)' does not say '\(expected)'")
            }
        }
    }

    func testRandomBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        let seeds: [[UInt8]] = [BroadcastMessage.hello(Self.hello).encoded, BroadcastMessage.frame(index: 2, time: 7).encoded,
                                BroadcastMessage.sound(.init(kind: .app, time: 1, channels: 2, samples: [0, 0, 0, 0])).encoded]
        for _ in 0..<20_000 {
            var b = seeds.randomElement(using: &generator) ?? []
            for _ in 0..<Int.random(in: 1...4, using: &generator) where !b.isEmpty {
                b[Int.random(in: 0..<b.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { b = Array(b.prefix(Int.random(in: 0...b.count, using: &generator))) }
            _ = try? BroadcastMessage.parse(b)
        }
    }

    func testEndpointNamesAreChecked() {
        for bad in ["", ".hidden", "a/b", "..", String(repeating: "x", count: 65), "name with space", "é"] {
            XCTAssertThrowsError(try BroadcastEndpoint.checkName(bad), bad)
        }
        for good in ["demo", "game-1", "a.b_c"] { XCTAssertNoThrow(try BroadcastEndpoint.checkName(good), good) }
    }
}

/// The broadcast fuzzer's seeds and every input it crashed on, replayed.
final class BroadcastFuzzRegressionTests: XCTestCase {
    func testBroadcastParserRegressions() throws {
        var count = 0
        for folder in ["fuzz/regressions/broadcast", "fuzz/corpus/broadcast"] {
            let dir = PackagePaths.root.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] {
                XCTAssertNil(exerciseBroadcastMessageParser(Array(try Data(contentsOf: dir.appendingPathComponent(name)))), "\(folder)/\(name)")
                count += 1
            }
        }
        XCTAssertGreaterThanOrEqual(count, 9)
        // The seeds are messages: each parses.
        let hello = try Data(contentsOf: PackagePaths.root.appendingPathComponent("fuzz/corpus/broadcast/hello"))
        XCTAssertEqual(try BroadcastMessage.parse(Array(hello)), .hello(BroadcastMessageTests.hello))
    }
}
