// Issue 38: nothing is copied or decoded under a lock PipeWire's process callback takes. A
// source borrows the newest buffer under `StreamFrames.state`, reads it with the lock
// released, and gives it back; the callback meanwhile only swaps references.
//
// Catalogue:
// - testCameraDecodesWithTheStreamsLockReleased: an MJPG camera (the tests' camera, 640x480)
//   read in process; a hook the camera source calls between borrowing a buffer and decoding
//   it waits (up to 10 s) until the callback has taken a newer picture in — which it can
//   only do while the lock is free — and counts the times it found the lock held. Then the
//   borrowed buffer goes back to PipeWire through the loop's event, and 10 more new pictures
//   are decoded (buffers keep flowing). With the decode under the lock (as before), the hook
//   never finds the lock free: the callback stood still for the whole 10 s, and it fails.
// - testScreenCastCopiesWithTheStreamsLockReleased: the same hook on a Mutter screen cast
//   with a moving window, read in process with each capture method (full: a BGRA copy;
//   damage: a copy and conversion): the callback takes a newer picture in during the copy,
//   and the buffer copied goes back after.
// - testStateLendsTheNewestAndReturnsItOnceSuperseded: StreamFrames.State on synthetic
//   buffers: a borrowed buffer superseded is not given back at once but goes to `returning`
//   when the borrow ends; one not borrowed is given back at once; `remove` (PipeWire's
//   remove_buffer) of a borrowed buffer waits for the borrow to end, then forgets it.
import Foundation
import SwiftRecord
@testable import SwiftRecordCamera
@testable import SwiftRecordWayland
internal import CPipeWire
import SwiftRecordPipeWire
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class StreamBorrowTests: CameraTestCase {
    /// What the hook saw while the camera source held a buffer borrowed.
    private struct Seen: Sendable {
        var calls = 0
        /// The callback took a newer picture in while the first borrowed one was being read.
        var supersededWhileRead = false
        /// Looks at the state that found its lock held.
        var lockHeld = 0
    }

    /// A hook for `frames`' source: its first borrowed read waits (up to 10 s) until PipeWire's
    /// callback has taken a newer picture in, which needs the lock free; what it saw.
    private func probe(_ frames: StreamFrames) -> Locked<Seen> {
        let seen = Locked(Seen())
        frames.state.withLock { s in
            s.whileBorrowed = {
                // The first read only: it waits for the callback to swap a newer picture in.
                guard seen.withLock({ $0.calls += 1; return $0.calls == 1 }) else { return }
                var first: Int?
                let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
                while MonotonicClock.nanoseconds() < deadline {
                    let look = frames.state.withLockIfAvailable { s in (s.received, s.borrowed.map { !$0.is(s.held) } ?? false) }
                    guard let (received, superseded) = look else {
                        seen.withLock { $0.lockHeld += 1 }
                        usleep(1_000)
                        continue
                    }
                    if let first, received > first, superseded {
                        seen.withLock { $0.supersededWhileRead = true }
                        return
                    }
                    if first == nil { first = received }
                    usleep(1_000)
                }
            }
        }
        return seen
    }

    /// What a test of a source asserts after its first picture.
    private func assertSupersededWhileRead(_ seen: Locked<Seen>, _ frames: StreamFrames, _ what: String) {
        let after = seen[\.self]
        XCTAssertEqual(after.calls, 1, what)
        XCTAssertTrue(after.supersededWhileRead,
                      "\(what): PipeWire's callback took no newer picture in while the picture was read (the lock was held \(after.lockHeld) times looked at)")
        // The buffer read, superseded, goes back to PipeWire from its loop thread.
        let returned = frames.state.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 5_000_000_000) { s in
            s.returning.isEmpty && s.borrowed == nil ? true : nil
        }
        XCTAssertNotNil(returned, "\(what): the buffer read was never given back")
    }

    func testCameraDecodesWithTheStreamsLockReleased() throws {
        let desktop = try pipeWireWithCamera(size: "640x480", fps: 30, format: "mjpg")
        defer { desktop.stop() }
        setEnvironment(["XDG_RUNTIME_DIR": desktop.environment["XDG_RUNTIME_DIR"] ?? "", "PIPEWIRE_REMOTE": nil])

        let source = try CameraSource(configuration: CameraSource.Configuration(camera: "sr-test-cam"))
        defer { source.stop() }
        XCTAssertEqual(source.cameraFormat, "MJPG")
        let frames = source.frames
        let seen = probe(frames)
        let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: .yuv420p, maximumBufferCount: 4)
        let frame = try XCTUnwrap(try source.nextFrame(from: pool))
        XCTAssertFalse(frame.isUnchanged)
        assertSupersededWhileRead(seen, frames, "camera")
        // Buffers keep flowing: 10 more new pictures, each decoded from a borrowed buffer.
        for n in 0..<10 {
            let news = frames.state.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 5_000_000_000) { $0.heldIsNew ? true : nil }
            XCTAssertNotNil(news, "no new picture \(n) within 5 s: the camera ran out of buffers")
            let next = try XCTUnwrap(try source.nextFrame(from: pool))
            XCTAssertFalse(next.isUnchanged, "picture \(n)")
        }
        XCTAssertEqual(seen[\.calls], 11)
        XCTAssertEqual(source.unreadablePictures, 0)
    }

    func testScreenCastCopiesWithTheStreamsLockReleased() throws {
        let desktop = try HeadlessGNOME(movingWindow: true)
        defer { desktop.stop() }
        setEnvironment(["DBUS_SESSION_BUS_ADDRESS": desktop.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "",
                        "XDG_RUNTIME_DIR": desktop.environment["XDG_RUNTIME_DIR"] ?? ""])
        for method in ScreenCaptureMethod.allCases {
            var configuration = WaylandSource.Configuration(screenCast: .mutter)
            configuration.captureMethod = method
            let source = try WaylandSource(configuration: configuration)
            defer { source.stop() }
            let seen = probe(source.frames)
            let pool = try PixelBufferPool(width: source.nativeSize.width, height: source.nativeSize.height, pixelFormat: source.pixelFormat, maximumBufferCount: 4)
            let frame = try XCTUnwrap(try source.nextFrame(from: pool))
            XCTAssertFalse(frame.isUnchanged)
            assertSupersededWhileRead(seen, source.frames, "\(method)")
        }
    }

    func testStateLendsTheNewestAndReturnsItOnceSuperseded() throws {
        let buffers = (0..<3).map { _ in SyntheticBuffer(width: 4, height: 2, stride: 16, pixel: [0, 0, 0, 255]) }
        let (a, b, c) = (HeldBuffer(pointer: buffers[0].pw), HeldBuffer(pointer: buffers[1].pw), HeldBuffer(pointer: buffers[2].pw))
        let frames = StreamFrames()
        frames.state.withLock { s in
            XCTAssertNil(s.arrive(a))
            XCTAssertEqual(s.borrowHeld()?.pointer, a.pointer)
            XCTAssertFalse(s.heldIsNew)
            XCTAssertNil(s.borrowHeld(), "one borrow at a time")
            XCTAssertNil(s.arrive(b), "the borrowed buffer is not given back while read")
            XCTAssertEqual(s.arrive(c)?.pointer, b.pointer, "one nobody reads is given back at once")
            XCTAssertEqual(s.received, 3)
        }
        // PipeWire removes the borrowed buffer: that waits for the read to end.
        let removed = Locked(false)
        let remover = Thread {
            frames.remove(a.pointer)
            removed.withLockNotifying { $0 = true }
        }
        remover.start()
        usleep(50_000)
        XCTAssertFalse(removed[\.self], "remove_buffer returned while the buffer was read")
        frames.endBorrow()
        XCTAssertNotNil(removed.wait(untilNanoseconds: MonotonicClock.nanoseconds() + 5_000_000_000) { $0 ? true : nil })
        frames.state.withLock { s in
            XCTAssertNil(s.borrowed)
            XCTAssertTrue(s.returning.isEmpty, "a removed buffer is never given back")
            XCTAssertEqual(s.held?.pointer, c.pointer)
            // Borrowed, still the newest when done: it stays held, nothing to give back.
            XCTAssertEqual(s.borrowHeld()?.pointer, c.pointer)
            XCTAssertFalse(s.endBorrow())
            XCTAssertEqual(s.held?.pointer, c.pointer)
            // Borrowed and superseded: given back after.
            s.heldIsNew = true
            _ = s.borrowHeld()
            XCTAssertNil(s.arrive(a))
            XCTAssertTrue(s.endBorrow())
            XCTAssertEqual(s.returning.map(\.pointer), [c.pointer])
        }
        withExtendedLifetime(buffers) {}
    }
}
