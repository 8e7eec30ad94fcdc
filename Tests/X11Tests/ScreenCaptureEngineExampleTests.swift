import Foundation
import SwiftRecordX11
import TestSupport
import XCTest

/// Examples/ScreenCaptureEngine, a ScreenCaptureKit capture engine written as for the Mac
/// (SCStream, a stream output, an AVAssetWriter behind it), run under a private Xvfb while a
/// window draws a new step every 50 ms: a movie that ffprobe reads, with about a frame per step.
final class ScreenCaptureEngineExampleTests: XvfbTestCase {
    override class var runsTheBinary: Bool { false }
    override class var checksWithFFmpeg: Bool { false }

    func testTheEngineRecordsTheDisplayIntoAMovie() throws {
        let example = PackagePaths.product("ScreenCaptureEngine")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: example), "build the examples first (swift build)")
        let window = try X11AppWindow(display: server.display, title: "engine", x: 100, y: 100, width: 320, height: 180)
        let movie = path("engine.mov")
        let run = try Proc.spawn(example, [movie, "2"], environment: server.environment)
        var step = 0
        while run.exited() == nil, step < 200 {
            try window.draw(step: step)
            step += 1
            Thread.sleep(forTimeInterval: 0.05)
        }
        let result = run.wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let counts = result.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        print("ScreenCaptureEngineExampleTests: \(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) after \(step) steps")
        XCTAssertEqual(counts.count, 2, result.stdout)
        XCTAssertGreaterThan(counts.first ?? 0, 15, "a picture for most of the 40 steps in 2 s")
        let probe = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                                             "stream=codec_name,width,height,nb_read_frames:format=duration", "-of", "csv=p=0", movie])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let lines = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        XCTAssertEqual(lines.first?.prefix(3).map { $0 }, ["h264", "1280", "720"], probe.stdout)
        XCTAssertEqual(Int(lines.first?.last ?? ""), counts.last, "ffprobe counts the frames the writer took")
        let duration = try XCTUnwrap(Double(lines.last?.first ?? ""), probe.stdout)
        XCTAssertEqual(duration, 2.0, accuracy: 0.6)
    }
}
