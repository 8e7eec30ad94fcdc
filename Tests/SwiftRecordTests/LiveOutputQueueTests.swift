@testable import SwiftRecord
import XCTest

/// The live queue's drop rules (OBS's): whole non-key video frames go first under
/// congestion, never audio or key frames; nothing is queued while disconnected; the stream
/// always resumes at a key frame.
final class LiveOutputQueueTests: XCTestCase {
    private let fps30 = (num: Int32(1), den: Int32(30))
    private let audio48k = (num: Int32(1), den: Int32(48_000))

    private func video(_ frame: Int64, key: Bool = false) -> EncodedPacket {
        EncodedPacket(track: 0, isVideo: true, isKey: key || frame % 60 == 0, dts: frame, duration: 1, timeBase: fps30)
    }

    private func audio(_ frame: Int64) -> EncodedPacket {
        EncodedPacket(track: 1, isVideo: false, isKey: true, dts: frame * 1600, duration: 1600, timeBase: audio48k)
    }

    func testCongestionDropsOnlyNonKeyVideoAndResumesAtAKeyFrame() {
        var queue = LiveQueue()
        var drops = LiveQueue.Drops()
        // Nothing is sent: the queue fills for 3 s of a 30-fps stream with a key frame every 2 s.
        for frame in Int64(0)..<90 {
            for p in [video(frame), audio(frame)] {
                let d = queue.push(p, connected: true)
                drops.videoFrames += d.videoFrames
                drops.audioPackets += d.audioPackets
            }
        }
        XCTAssertEqual(drops.audioPackets, 0, "audio is never dropped for congestion")
        XCTAssertGreaterThan(drops.videoFrames, 60)
        XCTAssertEqual(queue.packets.filter { !$0.isVideo }.count, 90, "every audio packet is still queued")
        let queuedVideo = queue.packets.filter(\.isVideo)
        XCTAssertTrue(queuedVideo.allSatisfy(\.isKey), "only key frames stay once frames were dropped")
        XCTAssertEqual(queuedVideo.map(\.dts), [0, 60])
        XCTAssertTrue(queue.awaitingKeyFrame)
    }

    func testBelowTheLimitNothingIsDropped() {
        var queue = LiveQueue()
        for frame in Int64(0)..<20 {
            XCTAssertEqual(queue.push(video(frame), connected: true), LiveQueue.Drops())
        }
        XCTAssertEqual(queue.queuedMicroseconds, 19 * 1_000_000 / 30)
        XCTAssertEqual(queue.pop()?.dts, 0)
    }

    func testDisconnectedQueuesNothingAndResumesAtAKeyFrame() {
        var queue = LiveQueue()
        _ = queue.push(video(0), connected: true)
        _ = queue.push(video(1), connected: true)
        XCTAssertEqual(queue.clear(), LiveQueue.Drops(videoFrames: 2, audioPackets: 0))
        XCTAssertEqual(queue.push(audio(2), connected: false), LiveQueue.Drops(videoFrames: 0, audioPackets: 1))
        XCTAssertTrue(queue.isEmpty)
        // Reconnected: non-key frames wait for the next key frame; audio goes through.
        XCTAssertEqual(queue.push(video(3), connected: true).videoFrames, 1)
        XCTAssertEqual(queue.push(audio(3), connected: true), LiveQueue.Drops())
        XCTAssertEqual(queue.push(video(60), connected: true), LiveQueue.Drops())
        XCTAssertEqual(queue.push(video(61), connected: true), LiveQueue.Drops())
        XCTAssertEqual(queue.packets.filter(\.isVideo).map(\.dts), [60, 61])
    }

    func testHardLimitEmptiesTheQueue() {
        var queue = LiveQueue()
        queue.hardLimitMicroseconds = 3_000_000
        var lost = 0
        for frame in Int64(0)..<200 { lost += queue.push(video(frame, key: true), connected: true).videoFrames }
        XCTAssertGreaterThan(lost, 0)
        XCTAssertLessThanOrEqual(queue.queuedMicroseconds, 3_000_000)
    }

    func testLiveOutputURLs() throws {
        XCTAssertEqual(try LiveOutput(url: URL(string: "rtmp://host/app/key")!).kind, .rtmp)
        XCTAssertEqual(try LiveOutput(url: URL(string: "srt://host:9000")!).kind, .srt)
        XCTAssertEqual(try LiveOutput(url: URL(fileURLWithPath: "/tmp/x.m3u8")).kind, .hls)
        XCTAssertEqual(try LiveOutput(url: URL(string: "rtmp://h:1936/app/secret?x=1")!).displayName, "rtmp://h:1936/app/<key>")
        for bad in ["http://host/x", "rtmp:///app/key", "file:///tmp/x.mp4"] {
            XCTAssertThrowsError(try LiveOutput(url: URL(string: bad)!), bad) { error in
                XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidArgument)
            }
        }
    }

    func testALiveOutputGoesToOneWriterBeforeStartWriting() throws {
        let output = try LiveOutput(url: URL(string: "rtmp://127.0.0.1/live/key")!)
        let writer = AssetWriter(outputURL: URL(fileURLWithPath: "/tmp/never-written.mp4"), fileType: .mp4)
        XCTAssertTrue(writer.canAdd(output))
        try writer.add(output)
        XCTAssertFalse(writer.canAdd(output))
        let other = AssetWriter(outputURL: URL(fileURLWithPath: "/tmp/never-written-2.mp4"), fileType: .mp4)
        XCTAssertThrowsError(try other.add(output))
        XCTAssertEqual(writer.liveOutputs.count, 1)
    }

    func testReplayBufferKeepsWholeGroupsOfPictures() throws {
        let buffer = try ReplayBuffer(duration: MediaTime(seconds: 3))
        XCTAssertThrowsError(try buffer.save(to: URL(fileURLWithPath: "/tmp/never.mp4")))
        for frame in Int64(0)..<300 {
            buffer.offer(video(frame))
            buffer.offer(audio(frame))
            if frame > 150 {
                // 3 s, plus at most one key-frame interval (2 s), from a key frame on.
                XCTAssertGreaterThanOrEqual(buffer.bufferedSeconds, 3.0 - 1.0 / 30)
                XCTAssertLessThan(buffer.bufferedSeconds, 5.0)
                let first = try XCTUnwrap(buffer.state.withLock { $0.packets.first { $0.packet.isVideo }?.packet })
                XCTAssertTrue(first.isKey)
            }
        }
        let audioKept = buffer.state.withLock { $0.packets.map(\.packet).filter { !$0.isVideo } }
        let firstKey = try XCTUnwrap(buffer.state.withLock { $0.packets.first { $0.packet.isVideo }?.packet })
        XCTAssertEqual(audioKept.first?.ptsMicroseconds, firstKey.ptsMicroseconds, "the sound starts with the first picture")
    }

    func testReplayBufferMemoryLimitEvictsWholeGroups() throws {
        let buffer = try ReplayBuffer(duration: MediaTime(seconds: 60), memoryLimit: 1_000_000)
        for frame in Int64(0)..<600 {
            buffer.offer(EncodedPacket(track: 0, isVideo: true, isKey: frame % 60 == 0, dts: frame, duration: 1,
                                       timeBase: fps30, size: 10_000))
            // Over the limit by at most the group being filled (60 frames of 10 kB) and a
            // chunk of the memory it is kept in.
            XCTAssertLessThanOrEqual(buffer.bufferedBytes, 1_000_000 + 600_000 + 64 << 10)
        }
        XCTAssertLessThan(buffer.bufferedSeconds, 60)
        XCTAssertGreaterThan(buffer.bufferedSeconds, 1)
        XCTAssertTrue(try XCTUnwrap(buffer.state.withLock { $0.packets.first?.packet }).isKey)
    }
}
