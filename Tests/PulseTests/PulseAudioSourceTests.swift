import Foundation
import SwiftRecord
import SwiftRecordPulse
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What a test keeps of each chunk.
struct ChunkRecord: Sendable {
    let pts: Int64
    let frames: Int
    let receivedAt: Int64
    let followsGap: Bool
    let left: [Float]
}

/// Reads chunks until `frames` frames or `timeout` seconds; nil marks the source's end.
func collect(_ source: PulseAudioSource, frames wanted: Int, timeout: Double) throws -> (chunks: [ChunkRecord], ended: Bool) {
    var chunks: [ChunkRecord] = []
    var total = 0
    let deadline = MonotonicClock().now().seconds + timeout
    while total < wanted, MonotonicClock().now().seconds < deadline {
        guard let chunk = try source.nextChunk() else { return (chunks, true) }
        let received = MonotonicClock().now().convertScale(1_000_000_000).value
        let samples = chunk.samples
        let channels = samples.format.channelCount
        let left: [Float] = samples.planes[0].withUnsafeBytes { raw in
            let floats = raw.bindMemory(to: Float.self)
            return stride(from: 0, to: floats.count, by: channels).map { floats[$0] }
        }
        chunks.append(ChunkRecord(pts: samples.presentationTimeStamp.convertScale(1_000_000_000).value, frames: samples.frameCount,
                                  receivedAt: received, followsGap: chunk.followsGap, left: left))
        total += samples.frameCount
    }
    return (chunks, false)
}

/// One private PulseAudio server for the class; libpulse in this process pointed at it.
final class PulseAudioSourceTests: XCTestCase {
    nonisolated(unsafe) static var server: PrivatePulseServer?
    nonisolated(unsafe) static var startError: String?
    nonisolated(unsafe) static var environment: PulseServerEnvironment?

    override class func setUp() {
        super.setUp()
        guard PrivatePulseServer.isInstalled else { return }
        do {
            let s = try PrivatePulseServer()
            server = s
            environment = PulseServerEnvironment(s.address)
        } catch {
            startError = "\(error)"
        }
    }

    override class func tearDown() {
        environment?.restore()
        environment = nil
        server?.stop()
        server = nil
        super.tearDown()
    }

    var server: PrivatePulseServer!

    override func setUpWithError() throws {
        try XCTSkipUnless(PrivatePulseServer.isInstalled, "pulseaudio/pactl/pacat not installed; run scripts/install-deps.sh")
        server = try XCTUnwrap(PulseAudioSourceTests.server, "the private PulseAudio server did not start: \(PulseAudioSourceTests.startError ?? "?")")
    }

    func testListsTheNullSinksMonitorAsTheDefaultMonitor() throws {
        let devices = try PulseAudioSource.listDevices()
        let monitor = try XCTUnwrap(devices.first { $0.name == "test.monitor" }, "devices: \(devices)")
        XCTAssertTrue(monitor.isMonitor)
        XCTAssertTrue(monitor.isDefault)

        let registry = AudioSourceRegistry()
        SwiftRecordPulse.register(in: registry)
        let lister = try XCTUnwrap(registry.entry(named: "pulse")?.listDevices)
        XCTAssertEqual(try lister().map(\.name), devices.map(\.name))
        XCTAssertTrue(PulseAudioSource.isServerReachable())
    }

    func testDefaultDeviceIsTheDefaultSinksMonitorByItsRealName() throws {
        let registry = AudioSourceRegistry()
        SwiftRecordPulse.register(in: registry)
        let source = try registry.makeSource(named: "pulse", options: AudioSourceOptions())
        defer { source.stop() }
        try source.start()
        let description = try XCTUnwrap(source.captureDescription)
        XCTAssertTrue(description.contains("test.monitor") && description.contains("'test'"), description)
        XCTAssertEqual((source as? PulseAudioSource)?.deviceName, "test.monitor")
        XCTAssertEqual(source.format, AudioFormat(sampleType: .f32, sampleRate: 48_000, channelLayout: .stereo))
        XCTAssertNotNil(try source.nextChunk())
    }

    /// A 1 kHz tone played into the sink comes back from its monitor, stamped on the host
    /// clock with times that count samples.
    func testRecordsAToneFromTheMonitorWithHostTimestamps() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tone = dir.appendingPathComponent("tone.raw").path
        try writeTone(to: tone, seconds: 6)

        let source = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor"))
        defer { source.stop() }
        try source.start()
        let player = try server.play(tone)
        defer { player.terminate() }
        let (chunks, ended) = try collect(source, frames: 3 * 48_000, timeout: 30)
        XCTAssertFalse(ended, "the source ended: \(source.endReason ?? "?")")
        XCTAssertGreaterThan(chunks.count, 10)
        guard let first = chunks.first else { return }

        // The first sample was captured just before the chunk arrived (fragments are ~10 ms;
        // a busy machine may deliver late, never before).
        XCTAssertLessThan(abs(first.receivedAt - first.pts), 500_000_000, "first pts \(first.pts), received at \(first.receivedAt)")
        XCTAssertLessThanOrEqual(first.pts, first.receivedAt + 50_000_000, "a chunk stamped after it arrived")

        // Each chunk starts where the previous one ended, within a few ms.
        var gaps = 0
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            XCTAssertGreaterThan(b.pts, a.pts, "times must increase")
            if b.followsGap { gaps += 1; continue }
            let duration = Int64(a.frames) * 1_000_000_000 / 48_000
            XCTAssertLessThan(abs(b.pts - a.pts - duration), 3_000_000, "chunk of \(a.frames) frames at \(a.pts), next at \(b.pts)")
        }
        XCTAssertLessThanOrEqual(gaps, 2, "gaps in a 3 s recording on an idle server")

        // The tone: loud, at 1 kHz by its zero crossings.
        let samples = chunks.flatMap(\.left)
        let window = 4_800
        var loud: [Int] = []
        for start in stride(from: 0, to: samples.count - window, by: window) {
            let slice = samples[start..<(start + window)]
            let rms = sqrt(slice.reduce(0) { $0 + $1 * $1 } / Float(window))
            if rms > 0.25 { loud.append(start) }
        }
        XCTAssertGreaterThanOrEqual(loud.count, 10, "at least a second of tone (RMS ≈ 0.35) in \(samples.count) samples")
        guard let from = loud.first, let to = loud.last.map({ $0 + window }), to - from > window else { return }
        let tone1 = Array(samples[from..<to])
        var crossings = 0
        for (x, y) in zip(tone1, tone1.dropFirst()) where (x < 0) != (y < 0) { crossings += 1 }
        let frequency = Double(crossings) / 2 / (Double(tone1.count) / 48_000)
        XCTAssertEqual(frequency, 1000, accuracy: 20, "zero crossings say \(frequency) Hz")
    }

    func testAnUnknownDeviceIsAClearError() throws {
        let source = try PulseAudioSource(options: AudioSourceOptions(device: "no-such-device"))
        defer { source.stop() }
        XCTAssertThrowsError(try source.start()) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .invalidArgument)
            XCTAssertTrue(e?.message.contains("no source named 'no-such-device'") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("test.monitor") == true, "\(error)")
        }
        let sink = try PulseAudioSource(options: AudioSourceOptions(device: "test"))
        defer { sink.stop() }
        XCTAssertThrowsError(try sink.start()) { error in
            XCTAssertTrue("\(error)".contains("pulse:test.monitor"), "a sink's name suggests its monitor: \(error)")
        }
    }

    func testAFormatPulseAudioCannotRecordIsRefusedAtOnce() {
        XCTAssertThrowsError(try PulseAudioSource(options: AudioSourceOptions(sampleRate: 768_000))) { error in
            XCTAssertEqual((error as? SwiftRecordError)?.kind, .invalidArgument)
        }
    }

    /// The sink suspended: no data, so `nextChunk()` waits; `interrupt()` ends the wait.
    /// Resumed, the first chunk says samples are missing and its time jumps.
    func testInterruptUnblocksAWaitingReadAndASuspendIsAGap() throws {
        let source = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor", channelLayout: .mono))
        defer { source.stop() }
        try source.start()
        XCTAssertNotNil(try source.nextChunk())
        try server.pactl(["suspend-sink", "test", "1"])
        var resumed = false
        defer { if !resumed { _ = try? server.pactl(["suspend-sink", "test", "0"]) } }
        usleep(300_000)

        // Drain what was queued before the suspend; then a read blocks.
        let finished = DispatchSemaphore(value: 0)
        Thread {
            while (try? source.nextChunk()) != nil {}
            finished.signal()
        }.start()
        usleep(700_000)
        XCTAssertEqual(finished.wait(timeout: .now()), .timedOut, "nextChunk returned while the sink was suspended")
        let interrupted = MonotonicClock().now().seconds
        source.interrupt()
        XCTAssertEqual(finished.wait(timeout: .now() + 2), .success, "interrupt() did not unblock nextChunk")
        XCTAssertLessThan(MonotonicClock().now().seconds - interrupted, 1.0)
        XCTAssertNil(try source.nextChunk(), "an interrupted source stays ended")

        // A new source across a suspend and resume: the chunk after the resume follows a gap.
        try server.pactl(["suspend-sink", "test", "0"])
        resumed = true
        let second = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor"))
        defer { second.stop() }
        try second.start()
        _ = try collect(second, frames: 4_800, timeout: 10)
        try server.pactl(["suspend-sink", "test", "1"])
        usleep(500_000)
        try server.pactl(["suspend-sink", "test", "0"])
        let after = try collect(second, frames: 48_000, timeout: 10)
        XCTAssertTrue(after.chunks.contains { $0.followsGap }, "no chunk marked as following the suspend")
        XCTAssertGreaterThanOrEqual(second.gapCount, 1)
    }

    func testStopIsIdempotentAndEndsReads() throws {
        let source = try PulseAudioSource(options: AudioSourceOptions(device: "test.monitor"))
        try source.start()
        XCTAssertNotNil(try source.nextChunk())
        let stopping = MonotonicClock().now().seconds
        source.stop()
        XCTAssertLessThan(MonotonicClock().now().seconds - stopping, 1.0, "stop() waited")
        source.stop()
        XCTAssertNil(try source.nextChunk())
        XCTAssertNil(source.endReason, "a stop asked for is not a device loss")
        XCTAssertThrowsError(try source.start())
    }
}
