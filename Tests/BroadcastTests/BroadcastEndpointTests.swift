import CBroadcast
import Foundation
import Glibc
import SwiftRecord
import TestSupport
import XCTest
@testable import SwiftRecordBroadcast

/// A host and a sender in this process, over a real socket in a private runtime folder:
/// pictures cross without a copy and go back, a full ring drops (never blocks), a second
/// sender is refused, a gone host fails the sender's next call at once, hostile messages and
/// descriptors are refused while the host keeps taking frames.
final class BroadcastEndpointTests: MediaTestCase {
    override class var checksWithFFmpeg: Bool { false }
    override class var runsTheBinary: Bool { false }
    static let stream = BroadcastSampleHandler.Stream(width: 64, height: 48, frameRate: Rational(30)!)

    override func setUpWithError() throws {
        try super.setUpWithError()
        chmod(dir.path, 0o700)
        setenv("XDG_RUNTIME_DIR", dir.path, 1)
    }

    /// A source for `name` opened on another thread while `connect` connects the sender.
    private func open(_ name: String, connect: () throws -> Void) throws -> BroadcastSource {
        let opened = Locked<Result<BroadcastSource, any Error>?>(nil)
        Thread.detachNewThread {
            let r = Result { () throws -> BroadcastSource in
                let source = try BroadcastSource(configuration: .init(name: name, senderTimeout: MediaTime(seconds: 10), delay: MediaTime(value: 0, timescale: 1)))
                // The ring goes to the sender as the recording starts.
                try source.start()
                return source
            }
            opened.withLockNotifying { $0 = r }
        }
        let deadline = Date().addingTimeInterval(10)
        while true {
            do { try connect(); break } catch where Date() < deadline { usleep(20_000) }
        }
        let r = opened.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 10_000_000_000) { $0 }
        return try XCTUnwrap(r).get()
    }

    /// The next picture the source gives within 2 s.
    private func nextPicture(_ source: BroadcastSource) throws -> CapturedFrame? {
        let pool = try PixelBufferPool(width: 64, height: 48, pixelFormat: .yuv420p)
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            do { return try source.nextFrame(from: pool) } catch let e as SwiftRecordError where e.kind == .notReady { continue }
        }
        return nil
    }

    private func send(_ sender: BroadcastSampleHandler, luma: UInt8) throws -> Bool {
        guard let buffer = try sender.nextPixelBuffer() else { return false }
        buffer.withWriteAccess { planes in
            for row in 0..<planes[0].height { (planes[0].baseAddress + row * planes[0].bytesPerRow).initializeMemory(as: UInt8.self, repeating: luma, count: planes[0].rowLength) }
        }
        try sender.processSampleBuffer(SampleBuffer(pixelBuffer: buffer, presentationTimeStamp: MonotonicClock().now()), with: .video)
        return true
    }

    /// The buffers of `stream`'s ring.
    static var ringCount: Int { BroadcastHost.ringCount(bufferSize: SharedPictureRing.layout(width: 64, height: 48, count: 1).size) }

    func testPicturesCrossWithoutACopyAndAFullRingDropsInsteadOfBlocking() throws {
        let sender = BroadcastSampleHandler(name: "pictures", stream: Self.stream)
        let source = try open("pictures") { try sender.broadcastStarted(withSetupInfo: ["name": "test"]) }
        defer { source.stop() }
        XCTAssertEqual(source.nativeSize, VideoSize(width: 64, height: 48))
        // The socket is the user's alone.
        var st = stat()
        XCTAssertEqual(lstat(source.host.endpointPath, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        // The ring holds as many as fit in 20 MB, from 6 (1080p) to 16; a frame more finds
        // none free and is dropped, at once.
        let ring = Self.ringCount
        XCTAssertEqual(ring, 16)
        XCTAssertEqual(BroadcastHost.ringCount(bufferSize: SharedPictureRing.layout(width: 1920, height: 1080, count: 1).size), 6)
        XCTAssertEqual(BroadcastHost.ringCount(bufferSize: SharedPictureRing.layout(width: 1280, height: 720, count: 1).size), 15)
        for i in 0..<ring { XCTAssertTrue(try send(sender, luma: UInt8(100 + i))) }
        let before = Date()
        XCTAssertFalse(try send(sender, luma: 1))
        XCTAssertLessThan(Date().timeIntervalSince(before), 0.05)
        XCTAssertEqual(sender.counts.framesDropped, 1)
        for i in 0..<ring {
            let frame = try XCTUnwrap(try nextPicture(source), "frame \(i)")
            let y = frame.pixelBuffer.withReadAccess { $0[0].baseAddress.load(fromByteOffset: 64 * 47 + 63, as: UInt8.self) }
            XCTAssertEqual(y, UInt8(100 + i))
        }
        // The host gave back all but the picture it shows last: the rest free again.
        var sent = 0
        let deadline = Date().addingTimeInterval(2)
        while sent < ring - 1, Date() < deadline { if try send(sender, luma: 7) { sent += 1 } else { usleep(5_000) } }
        XCTAssertEqual(sent, ring - 1)
        XCTAssertEqual(source.counts.refusedMessages, 0)
    }

    func testASecondSenderOnATakenNameIsRefusedClearly() throws {
        let first = BroadcastSampleHandler(name: "taken", stream: Self.stream)
        let source = try open("taken") { try first.broadcastStarted() }
        defer { source.stop() }
        let second = BroadcastSampleHandler(name: "taken", stream: Self.stream)
        XCTAssertThrowsError(try second.broadcastStarted()) { error in
            XCTAssertTrue("\(error)".contains("taken by the sender with pid \(getpid())"), "\(error)")
        }
        // And a second recorder on the name is refused too.
        XCTAssertThrowsError(try BroadcastHost(name: "taken")) { XCTAssertTrue("\($0)".contains("is taken"), "\($0)") }
        XCTAssertTrue(try send(first, luma: 9))
    }

    func testAGoneHostFailsTheSendersNextCallAtOnce() throws {
        let sender = BroadcastSampleHandler(name: "gone", stream: Self.stream)
        let source = try open("gone") { try sender.broadcastStarted() }
        XCTAssertTrue(try send(sender, luma: 3))
        source.stop()
        let stopped = Date()
        var failure: Error?
        while failure == nil, Date().timeIntervalSince(stopped) < 1 {
            do { _ = try send(sender, luma: 4) } catch { failure = error }
        }
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 0.1)
        XCTAssertTrue("\(failure.map { "\($0)" } ?? "none")".contains("the recorder has gone"))
        // Every later call fails the same way, at once.
        XCTAssertThrowsError(try sender.processAudio([0, 0], presentationTime: MonotonicClock().now(), with: .audioApp))
    }

    /// A sender written by hand: a hello, then whatever a test sends.
    private func rawSender(_ name: String, source: inout BroadcastSource?) throws -> BroadcastSocket {
        var socket: BroadcastSocket?
        source = try open(name) {
            let s = try BroadcastSocket.connect(to: try BroadcastEndpoint.path(for: name))
            try s.send(.hello(.init(pid: getpid(), width: 64, height: 48, frameRateNumerator: 30, frameRateDenominator: 1,
                                    sampleRate: 48_000, channels: 2, name: "hostile")))
            guard case .datagram(let bytes, let fds, _) = try s.receive(untilNanoseconds: MonotonicClock.nanoseconds() + 5_000_000_000),
                  case .welcome = try BroadcastMessage.parse(bytes) else { throw BroadcastProtocolError("no welcome") }
            for fd in fds { close(fd) }
            socket = s
        }
        return try XCTUnwrap(socket)
    }

    private func sendRaw(_ socket: BroadcastSocket, _ bytes: [UInt8], fds: [Int32] = []) {
        _ = bytes.withUnsafeBytes { b in fds.withUnsafeBufferPointer { f in srb_send(socket.fd, b.baseAddress, b.count, f.baseAddress, Int32(f.count)) } }
    }

    func testHostileMessagesAreRefusedWhileTheHostKeepsRecording() throws {
        var opened: BroadcastSource?
        let socket = try rawSender("hostile", source: &opened)
        let source = try XCTUnwrap(opened)
        defer { source.stop() }
        let now = MonotonicClock.nanoseconds()
        let unsealed = srb_memfd_create("unsealed")
        defer { close(unsealed) }
        var pipeFds: [Int32] = [0, 0]
        pipe(&pipeFds)
        defer { close(pipeFds[0]); close(pipeFds[1]) }
        let hostile: [([UInt8], [Int32])] = [
            ([1, 2, 3], []),
            ([UInt8](repeating: 0xff, count: 100), []),
            ([UInt8](repeating: 0, count: BroadcastMessage.maximumMessageSize + 100), []),
            (BroadcastMessage.frame(index: Self.ringCount, time: now).encoded, []),
            (BroadcastMessage.frame(index: 1 << 20, time: now).encoded, []),
            (BroadcastMessage.frame(index: 0, time: now).encoded, [unsealed]),
            (BroadcastMessage.frame(index: 0, time: now).encoded, [pipeFds[0], pipeFds[1]]),
            (BroadcastMessage.hello(BroadcastMessageTests.hello).encoded, []),
            (BroadcastMessage.welcome(SharedPictureRing.layout(width: 64, height: 48, count: 2)).encoded, []),
            (BroadcastMessage.release(index: 0).encoded, []),
            (BroadcastMessage.sound(.init(kind: .app, time: now, channels: 1, samples: [0, 0])).encoded, []),
        ]
        for (bytes, fds) in hostile { sendRaw(socket, bytes, fds: fds) }
        // The same buffer twice before the host gave it back; then a time going back.
        sendRaw(socket, BroadcastMessage.frame(index: 0, time: now).encoded)
        sendRaw(socket, BroadcastMessage.frame(index: 0, time: now + 1).encoded)
        sendRaw(socket, BroadcastMessage.frame(index: 1, time: now - 1_000_000).encoded)
        sendRaw(socket, BroadcastMessage.frame(index: 2, time: now + 2).encoded)
        let first = try XCTUnwrap(try nextPicture(source))
        let second = try XCTUnwrap(try nextPicture(source))
        XCTAssertEqual(second.captureTime.convertScale(1_000_000_000).value - first.captureTime.convertScale(1_000_000_000).value, 2)
        let counts = source.counts
        XCTAssertEqual(counts.framesReceived, 2)
        XCTAssertEqual(counts.refusedMessages, hostile.count + 2)
        // The descriptors sent to the host were closed by it, not kept: the pipe's write
        // end is ours alone again, so closing it ends the reader.
        XCTAssertEqual(fcntl(pipeFds[0], F_GETFD) >= 0, true)
    }

    func testTheSenderMapsOnlySealedMemfdsOfTheExpectedSize() throws {
        let layout = SharedPictureRing.layout(width: 64, height: 48, count: 2)
        func memfd(size: Int, sealed: Bool) -> Int32 {
            let fd = srb_memfd_create("t")
            ftruncate(fd, off_t(size))
            if sealed { srb_seal(fd) }
            return fd
        }
        let file = Glibc.open(path("plain"), O_RDWR | O_CREAT, 0o600)
        ftruncate(file, off_t(layout.size))
        var pipeFds: [Int32] = [0, 0]
        pipe(&pipeFds)
        close(pipeFds[1])
        let cases: [(String, [Int32], String)] = [
            ("unsealed", [memfd(size: layout.size, sealed: false), memfd(size: layout.size, sealed: true)], "not sealed"),
            ("short", [memfd(size: layout.size, sealed: true), memfd(size: layout.size - 1, sealed: true)], "not \(layout.size) bytes"),
            ("a plain file", [file, memfd(size: layout.size, sealed: true)], "not a memfd"),
            ("a pipe", [pipeFds[0], memfd(size: layout.size, sealed: true)], "not a regular file"),
            ("one too few", [memfd(size: layout.size, sealed: true)], "1 descriptors for a ring of 2"),
        ]
        for (name, fds, expected) in cases {
            XCTAssertThrowsError(try SharedPictureRing.map(layout, fds: fds), name) { XCTAssertTrue("\($0)".contains(expected), "\(name): \($0)") }
            // Every descriptor was closed by the refusal.
            for fd in fds { XCTAssertEqual(fcntl(fd, F_GETFD), -1, name) }
        }
        let good = try SharedPictureRing.map(layout, fds: [memfd(size: layout.size, sealed: true), memfd(size: layout.size, sealed: true)])
        XCTAssertNotNil(good.base(1))
    }

    /// The zero-copy picture over shared memory: every plane must lie inside the memory.
    func testWrappedPlanesMustLieInsideTheMemory() throws {
        let layout = SharedPictureRing.layout(width: 64, height: 48, count: 2)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: 64)
        defer { memory.deallocate() }
        let released = Locked(0)
        for (offsets, strides) in [([0, layout.offsets[1], layout.size - 10], layout.strides), (layout.offsets, [32, 32, 32]),
                                   ([-1, 0, 0], layout.strides), (layout.offsets, [64, 32])] {
            XCTAssertThrowsError(try PixelBuffer(wrappingPlanes: memory, length: layout.size, width: 64, height: 48, pixelFormat: .yuv420p,
                                                 planeOffsets: offsets, bytesPerRow: strides) { released.withLock { $0 += 1 } }, "\(offsets) \(strides)")
        }
        XCTAssertEqual(released.withLock { $0 }, 0, "a refused wrap must not call its release")
        var buffer: PixelBuffer? = try PixelBuffer(wrappingPlanes: memory, length: layout.size, width: 64, height: 48, pixelFormat: .yuv420p,
                                                   planeOffsets: layout.offsets, bytesPerRow: layout.strides) { released.withLock { $0 += 1 } }
        XCTAssertEqual(buffer?.storageIdentity, UInt(bitPattern: memory), "the picture is the memory, not a copy")
        buffer = nil
        XCTAssertEqual(released.withLock { $0 }, 1)
    }
}
