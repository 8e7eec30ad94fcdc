import Foundation
import SwiftRecord
import SwiftRecordPulse
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// No server at all, or one that never answers: clear errors, quickly.
final class PulseNoServerTests: XCTestCase {
    var directory: URL!
    var environment: PulseServerEnvironment?
    var nowhere: String { "unix:\(directory.path)/no-server/native" }

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory()
        environment = PulseServerEnvironment(nowhere)
    }

    override func tearDown() {
        environment?.restore()
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    func testNoServerIsAClearErrorAndNotReachableQuickly() throws {
        let start = MonotonicClock().now().seconds
        XCTAssertFalse(PulseAudioSource.isServerReachable())
        XCTAssertLessThan(MonotonicClock().now().seconds - start, 1.5)

        let source = try PulseAudioSource()
        defer { source.stop() }
        XCTAssertThrowsError(try source.start()) { error in
            let e = error as? SwiftRecordError
            XCTAssertEqual(e?.kind, .io)
            XCTAssertTrue(e?.message.contains("no PulseAudio server reachable at \(nowhere)") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("--audio none") == true, "\(error)")
        }
        XCTAssertNil(try? source.nextChunk())
        XCTAssertThrowsError(try PulseAudioSource.listDevices())
    }

    /// A TCP port that accepts connections but never speaks: the bounded wait gives up.
    func testAServerThatNeverAnswersIsNotReachableWithinTheTimeout() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 4), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)

        let start = MonotonicClock().now().seconds
        XCTAssertFalse(PulseAudioSource.isServerReachable(server: "tcp:127.0.0.1:\(port)", timeout: 1))
        XCTAssertLessThan(MonotonicClock().now().seconds - start, 2.5)
    }
}
