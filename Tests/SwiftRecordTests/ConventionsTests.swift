import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

// Catalogue (issue 26, the package's conventions):
// - testHelpersForTheCommandLineAndTestsAreNotPublic: ValueParsing, EncoderMemory, MediaFileReader,
//   AudioClockSync, SwiftRecordVersion, the fuzz entry points, Y4MStreamHeader.parse and
//   TimingLog.record are `package`, not public API.
// - testEveryPublicDeclarationIsInTheDocumentationTopics: whatever is public is curated on the
//   DocC landing page, so public means documented.
// - testEveryPublicTypeOfTheOtherModulesIsInItsArticle: SwiftRecordWayland, SwiftRecordCamera,
//   SwiftRecordPipeWire and the two broadcast modules have no catalogue of their own; each of
//   their public types is shown in a DocC article: WaylandSource and ScreenCastPortal in
//   "Recording a Wayland screen", CameraSource, PipeWireNodeSource and PipeWireNode in
//   "Recording a camera", the sender's and the host's types in "Recording another process".
// - testNoHandWrittenInterruptRetries: reads and writes retry EINTR through swift-system's
//   FileDescriptor, not through loops of our own (the one readv wrapper aside).
// - testReadersOfFinishedFilesOpenPathsThatAreNotUTF8: every input AVFormatContext is opened by
//   one owner (Demuxer), through PathBytes: the audio length in the summary, the frame count and
//   repair's "already complete" check read a file named with a non-UTF-8 byte (before: nil, false).
// - testChildrenSpawnedFromAThreadWithSIGTERMBlockedDieOnSIGTERM: the tests' spawning keeps its
//   clean signal mask (what any replacement of Processes.swift, swift-subprocess included, must keep).

/// What `public` means in SwiftRecord: the documented API, nothing the command line, the tests
/// or the fuzzers need only for themselves.
final class ConventionsTests: XCTestCase {
    static let landingPage = PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/SwiftRecord.docc/SwiftRecord.md")

    /// The top-level names declared `public` in the library's sources.
    static func publicTopLevelNames() throws -> [String] {
        let text = try PortingTableTests.sourceLines("SwiftRecord").joined(separator: "\n")
        return PortingTableTests.matches(
            #"(?m)^(?:@\w+ )*public (?:final )?(?:struct|class|enum|protocol|actor|typealias|let|var) (\w+)"#, in: text)
            + PortingTableTests.matches(#"(?m)^(?:@\w+ )*public func (\w+\()"#, in: text)
    }

    func testHelpersForTheCommandLineAndTestsAreNotPublic() throws {
        let names = Set(try ConventionsTests.publicTopLevelNames())
        XCTAssertGreaterThan(names.count, 50, "the public declarations were not found")
        for helper in ["ValueParsing", "EncoderMemory", "MediaFileReader", "AudioClockSync", "SwiftRecordVersion",
                       "exerciseValueParsers(", "exerciseY4MHeaderParser("] {
            XCTAssertFalse(names.contains(helper), "\(helper) is public; it serves the command line, the tests or the fuzzers only (package)")
        }
        let members = try PortingTableTests.sourceLines("SwiftRecord").joined(separator: "\n")
        for member in ["public func record(frame", "public static let header", "public static func parse(line"] {
            XCTAssertFalse(members.contains(member), "'\(member)' is an internal step (package), not API")
        }
    }

    func testEveryPublicDeclarationIsInTheDocumentationTopics() throws {
        let page = try String(contentsOf: ConventionsTests.landingPage, encoding: .utf8)
        for name in try ConventionsTests.publicTopLevelNames() {
            let link = name.hasSuffix("(") ? "``\(name)" : "``\(name)``"
            XCTAssertTrue(page.contains(link), "\(name) is public but not in SwiftRecord.md's topics: document it, or make it package")
        }
    }

    func testEveryPublicTypeOfTheOtherModulesIsInItsArticle() throws {
        let expected: [(modules: [String], names: Set<String>, article: String)] = [
            (["SwiftRecordWayland"], ["WaylandSource", "ScreenCastPortal"], "RecordingAWaylandScreen.md"),
            (["SwiftRecordCamera", "SwiftRecordPipeWire"], ["CameraSource", "PipeWireNodeSource", "PipeWireNode"], "RecordingACamera.md"),
            (["SwiftRecordBroadcastWire", "SwiftRecordBroadcast"], ["BroadcastSampleHandler", "BroadcastSampleType", "BroadcastPicture", "BroadcastError",
                                                                    "BroadcastSource", "BroadcastAudioSource", "SwiftRecordBroadcast"], "RecordingAnotherProcess.md"),
        ]
        for (modules, expectedNames, file) in expected {
            let article = try String(contentsOf: PackagePaths.root.appendingPathComponent("Sources/SwiftRecord/SwiftRecord.docc/" + file), encoding: .utf8)
            let text = try modules.flatMap { try PortingTableTests.sourceLines($0) }.joined(separator: "\n")
            let names = PortingTableTests.matches(#"(?m)^(?:@\w+ )*public (?:final )?(?:struct|class|enum|protocol|actor|typealias) (\w+)"#, in: text)
            XCTAssertEqual(Set(names), expectedNames, "\(modules)' public types changed: show each in \(file)")
            for name in names {
                XCTAssertTrue(article.contains("`\(name)`"), "\(name) is public but not in \(file)")
            }
        }
    }

    func testNoHandWrittenInterruptRetries() throws {
        for module in ["SwiftRecord", "SwiftRecordX11", "SwiftRecordPulse", "swift-record"] {
            let dir = PackagePaths.root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            XCTAssertFalse(files.isEmpty, "no sources in \(module)")
            for file in files {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                XCTAssertFalse(text.contains("errno == EINTR"),
                               "\(module)/\(file) retries EINTR by hand; use swift-system's FileDescriptor (retryOnInterrupt)")
            }
        }
    }

    func testReadersOfFinishedFilesOpenPathsThatAreNotUTF8() throws {
        guard FF.available else { throw XCTSkip("ffmpeg is not installed") }
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = dir.appendingPathComponent("plain.mp4").path
        try FF.ffmpeg(["-f", "lavfi", "-i", "testsrc=d=1:s=64x64:r=10", "-f", "lavfi", "-i", "sine=d=1",
                       "-c:v", "mpeg4", "-c:a", "aac", "-t", "1", plain])
        // "clip-\xFF.mp4": a name that is not UTF-8, as a PathBytes string.
        let odd = PathBytes.string(PathBytes.bytes(dir.path + "/clip-") + [0xFF] + Array(".mp4".utf8))
        let renamed = PathBytes.withCString(plain) { from in PathBytes.withCString(odd) { rename(from, $0) } }
        XCTAssertEqual(renamed, 0)
        XCTAssertEqual(MediaFileReader.videoFrameCount(path: odd), 10)
        let seconds = try XCTUnwrap(MediaFileReader.audioTrackSeconds(path: odd), "the audio track was not read")
        XCTAssertEqual(seconds, 1, accuracy: 0.1)
        XCTAssertTrue(MediaRepair.isComplete(odd), "a complete MP4 was not recognised as complete")
    }

    func testChildrenSpawnedFromAThreadWithSIGTERMBlockedDieOnSIGTERM() throws {
        let spawned = Locked<Result<ChildProcess, TestError>?>(nil)
        let thread = Thread {
            var block = sigset_t()
            sigemptyset(&block)
            sigaddset(&block, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &block, nil)
            let child = Result { () throws(TestError) -> ChildProcess in
                do { return try Proc.spawn("sleep", ["30"]) } catch { throw error as? TestError ?? .failed("\(error)") }
            }
            spawned.withLock { $0 = child }
        }
        thread.start()
        let deadline = Date().addingTimeInterval(10)
        while spawned.withLock({ $0 }) == nil && Date() < deadline { usleep(10_000) }
        let child = try XCTUnwrap(spawned.withLock { $0 }, "the thread did not spawn").get()
        child.signal(SIGTERM)
        let result = child.wait(timeout: 5)
        XCTAssertFalse(result.timedOut, "sleep ignored SIGTERM: it inherited the spawning thread's blocked signals")
        XCTAssertEqual(result.status, 128 + SIGTERM)
    }
}
