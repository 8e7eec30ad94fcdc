import Foundation
import SwiftRecord
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Timestamps stay right whatever the load: recordings in MP4, MOV, MKV and WebM, fragmented
/// (the default) and not, under three conditions made deterministic by fault injection or by
/// signals sent at a known frame of the recording's own timing log (never at a time measured
/// from spawn). Every file must decode without a timestamp warning, with strictly increasing
/// pts, exactly the frames `--stats-json` says were written; a copy taken mid-recording (what a
/// kill leaves) must repair to the same pictures it decodes to, the first ones of the finished file.
final class TimestampStressTests: CLITestCase {

    enum Condition: String, Sendable {
        /// The encoder takes 60 ms a frame at 30 fps: its queue stays full and frames are
        /// dropped all through the recording.
        case slowEncoder = "slow-encoder"
        /// The whole recorder is stopped (SIGSTOP) for 0.5 s once its timing log shows frame
        /// 20, again at 50 and at 80: each time the late ticks reach across a fragment boundary.
        case stopped
        /// The capture thread stalls 0.5 s before the grab of frame 20: a burst of late ticks
        /// (repeats while the encoder's queue has room, drops after).
        case sourceStall = "source-stall"

        var arguments: [String] {
            switch self {
            case .slowEncoder: return ["--simulate-encode-delay", "60"]
            case .stopped: return []
            case .sourceStall: return ["--simulate-source-stall", "\(TimestampStressTests.eventFrame):500"]
            }
        }
    }

    struct Case: Sendable {
        let container: String
        let fragmented: Bool
        let condition: Condition
        var name: String { "\(condition.rawValue)-\(fragmented ? "fragmented" : "no-fragments").\(container)" }
        /// A cut-off fragmented file can be repaired. Without fragments, an MP4/MOV has no index
        /// and an MKV/WebM no flushed cluster until finished: a killed recording is lost (as documented).
        var copyIsRepairable: Bool { fragmented }
    }

    /// The frame at which the stall happens (and the first stop): 10 frames before the end of
    /// the first 1-s fragment, so the late ticks that follow reach across its boundary at frame 30.
    static let eventFrame: Int64 = 20
    /// The frames at which the recorder is stopped: each 10 frames before a fragment boundary.
    static let stopFrames: [Int64] = [eventFrame, 50, 80]
    /// The frame at which the "killed" copy is taken: 4 s in, so it holds completed
    /// fragments past the event (the one ending at 2 s at least, even with a slow encoder).
    static let copyFrame: Int64 = 120
    /// Five seconds at 30 fps.
    static let frameCount = 150

    /// One recording and what the test did to it; used on the test's thread only.
    final class Run {
        let testCase: Case
        let output: String, log: String, stats: String, copy: String
        let child: ChildProcess
        var stoppedAt: Date?
        /// Stops done (each continued).
        var stops = 0
        var copied = false
        var result: ProcessResult?

        init(_ testCase: Case, in dir: URL, child: (Case, [String]) throws -> ChildProcess) throws {
            self.testCase = testCase
            let base = dir.appendingPathComponent(testCase.name).path
            output = base + "." + testCase.container
            log = base + "-timing.csv"
            stats = base + "-stats.json"
            copy = base + "-killed." + testCase.container
            var args = ["--source", "synthetic", "--size", "320x180", "--realtime", "--frames", "\(TimestampStressTests.frameCount)",
                        "--quiet", "-o", output, "--timing-log", log, "--stats-json", stats] + testCase.condition.arguments
            if testCase.container == "webm" { args += ["--codec", "vp9"] }
            if !testCase.fragmented { args.append("--no-fragments") }
            self.child = try child(testCase, args)
        }
    }

    func testSlowEncoder() throws { try stress(.slowEncoder) }
    func testRecorderStoppedAndContinued() throws { try stress(.stopped) }
    func testBurstOfDropsFromTheSource() throws { try stress(.sourceStall) }

    /// Records all eight container × fragment cases at once under `condition`, then checks every file.
    func stress(_ condition: Condition) throws {
        let cases = ["mp4", "mov", "mkv", "webm"].flatMap { c in [true, false].map { Case(container: c, fragmented: $0, condition: condition) } }
        let runs = try cases.map { c in try Run(c, in: dir) { _, args in try spawnTracked(args) } }
        drive(runs)
        let finished = runs.map(Finished.init)
        let problems = ProblemList()
        let binary = self.binary
        DispatchQueue.concurrentPerform(iterations: finished.count) { i in
            let run = finished[i]
            let found: [String]
            do { found = try TimestampStressTests.check(run, binary: binary) } catch { found = ["\(error)"] }
            problems.add(found.map { "\(run.testCase.name): \($0)" })
        }
        for p in problems.all.sorted() { XCTFail(p) }
    }

    /// Follows every recording's timing log until all have exited: stops and continues a
    /// recorder at the event frame, copies a fragmented file at the copy frame.
    func drive(_ runs: [Run]) {
        let deadline = Date().addingTimeInterval(120)
        while runs.contains(where: { $0.result == nil }) {
            for run in runs where run.result == nil {
                if let r = run.child.exited() {
                    run.result = r
                    continue
                }
                let last = TimingLogFile.rows(run.log).compactMap(\.frame).max() ?? -1
                if run.testCase.condition == .stopped {
                    let frames = TimestampStressTests.stopFrames
                    if run.stoppedAt == nil, run.stops < frames.count, last >= frames[run.stops] {
                        run.child.signal(SIGSTOP)
                        run.stoppedAt = Date()
                    } else if let t = run.stoppedAt, Date().timeIntervalSince(t) >= 0.5 {
                        run.child.signal(SIGCONT)
                        run.stoppedAt = nil
                        run.stops += 1
                    }
                }
                if run.testCase.copyIsRepairable, !run.copied, last >= TimestampStressTests.copyFrame {
                    // What a kill at this moment would leave: the bytes written so far.
                    run.copied = (try? FileManager.default.copyItem(atPath: run.output, toPath: run.copy)) != nil
                }
            }
            if Date() > deadline {
                for run in runs where run.result == nil { run.child.signal(SIGCONT); run.result = run.child.wait(timeout: 0) }
                break
            }
            usleep(5_000)
        }
    }

    /// A recording that has ended, as the checks (on several threads) see it.
    struct Finished: Sendable {
        let testCase: Case
        let output: String, stats: String, copy: String
        let stops: Int, copied: Bool
        let result: ProcessResult?
        init(_ run: Run) {
            testCase = run.testCase
            output = run.output
            stats = run.stats
            copy = run.copy
            stops = run.stops
            copied = run.copied
            result = run.result
        }
    }

    /// Everything wrong with one recording (empty when all is right).
    static func check(_ run: Finished, binary: String) throws -> [String] {
        guard let result = run.result, result.status == 0, !result.timedOut else {
            return ["the recorder failed (status \(run.result?.status ?? -1), timed out \(run.result?.timedOut ?? true)): \(run.result?.stderr ?? "")"]
        }
        var problems: [String] = []
        if run.testCase.condition == .stopped, run.stops != stopFrames.count {
            problems.append("stopped \(run.stops) times, not at each of frames \(stopFrames)")
        }
        let statsData = try Data(contentsOf: URL(fileURLWithPath: run.stats))
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: statsData) as? [String: Any])
        let written = try XCTUnwrap(stats["framesWritten"] as? Int)
        let dropped = try XCTUnwrap(stats["framesDropped"] as? Int)
        // The condition must have happened: frames were dropped or repeated.
        if dropped + (stats["framesRepeated"] as? Int ?? 0) == 0 { problems.append("no frame dropped or repeated: the condition did not happen") }

        let final = try TimestampReport(run.output)
        problems += final.problems(expectingFrames: written, name: "finished file")

        guard run.testCase.copyIsRepairable else { return problems }
        guard run.copied else { return problems + ["no copy taken at frame \(TimestampStressTests.copyFrame)"] }
        let beforeFrames = try decodedFrames(run.copy)
        let before = beforeFrames.map(\.hash)
        guard !before.isEmpty else { return problems + ["the killed copy decodes no frame"] }
        let fixed = run.copy.replacingOccurrences(of: "-killed.", with: "-repaired.")
        let r = try Proc.run(binary, ["repair", run.copy, "-o", fixed])
        guard r.status == 0 else { return problems + ["repair of the killed copy failed: \(r.stderr)"] }
        let repaired = try TimestampReport(fixed)
        problems += repaired.problems(expectingFrames: before.count, name: "repaired copy")
        let after = try decodedFrames(fixed).map(\.hash)
        if after != before {
            let firstDiff = zip(after, before).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            problems.append("repair changes the pictures: \(before.count) decodable frames in the killed copy, \(after.count) after repair, first differing frame \(firstDiff.map(String.init) ?? "none")")
        }
        // Each picture the killed copy shows is the finished file's picture at that time (the copy
        // may miss the B-frames of its last mini-GOP, cut off in decode order, so not a plain prefix).
        let finished = Dictionary(try decodedFrames(run.output).map { ($0.millisecond, $0.hash) }, uniquingKeysWith: { a, _ in a })
        if let bad = beforeFrames.first(where: { finished[$0.millisecond] != $0.hash }) {
            problems.append("the killed copy's frame at \(bad.millisecond) ms is not the finished file's picture at that time")
        }
        // The copy must reach past the event and the fragment boundary after it.
        if let last = repaired.frameTimes.last, last < 1.5 { problems.append("the killed copy ends at \(last) s, before the event was over") }
        return problems
    }

    /// The decoded pictures' presentation times (whole milliseconds) and hashes, one per
    /// decoded frame (no frame-rate conversion).
    static func decodedFrames(_ path: String) throws -> [(millisecond: Int64, hash: String)] {
        let r = try Proc.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        guard r.succeeded else { throw TestError.failed("ffmpeg framemd5 \(path) failed: \(r.stderr)") }
        var timeBase = (num: Int64(1), den: Int64(1))
        var frames: [(Int64, String)] = []
        for line in r.stdout.split(separator: "\n") {
            if line.hasPrefix("#tb 0:") {
                let q = line.dropFirst(6).split(separator: "/").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
                if q.count == 2 { timeBase = (q[0], q[1]) }
                continue
            }
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !line.hasPrefix("#"), f.count == 6, let pts = Int64(f[2]) else { continue }
            frames.append(((pts * timeBase.num * 1000 + timeBase.den / 2) / timeBase.den, f[5]))
        }
        return frames
    }
}

/// What ffmpeg and ffprobe say about one file's timestamps.
struct TimestampReport {
    let path: String
    /// ffmpeg's warnings on decoding the whole file.
    let warnings: [String]
    let decodeSucceeded: Bool
    /// Decoded frames' pts (in output order) and their times in seconds.
    let framePTS: [Int64?]
    let frameTimes: [Double]
    /// Packets in file order.
    let packets: [(pts: Int64?, dts: Int64?)]

    init(_ path: String) throws {
        self.path = path
        let decode = try Proc.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", path, "-f", "null", "-"])
        decodeSucceeded = decode.succeeded
        warnings = decode.stderr.split(separator: "\n").map(String.init)
        let probe = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0",
                                             "-show_entries", "packet=pts,dts:frame=pts,pts_time", "-of", "csv", path])
        guard probe.succeeded else { throw TestError.failed("ffprobe \(path): \(probe.stderr)") }
        var frames: [Int64?] = [], times: [Double] = [], packets: [(Int64?, Int64?)] = []
        for line in probe.stdout.split(separator: "\n") {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if f.first == "packet", f.count >= 3 {
                packets.append((Int64(f[1]), Int64(f[2])))
            } else if f.first == "frame", f.count >= 3 {
                frames.append(Int64(f[1]))
                if let t = Double(f[2]) { times.append(t) }
            }
        }
        framePTS = frames
        frameTimes = times
        self.packets = packets
    }

    /// Timestamp warnings, non-increasing pts or dts, a frame count other than `expected`.
    func problems(expectingFrames expected: Int, name: String) -> [String] {
        var p: [String] = []
        if !decodeSucceeded { p.append("\(name): ffmpeg cannot decode it: \(warnings.prefix(5))") }
        let timestampWords = ["monoton", "dts", "pts", "timestamp"]
        let complaints = warnings.filter { w in timestampWords.contains { w.lowercased().contains($0) } }
        if !complaints.isEmpty { p.append("\(name): ffmpeg warns about timestamps: \(complaints.prefix(3))") }
        if framePTS.count != expected { p.append("\(name): \(framePTS.count) frames decode, expected \(expected)") }
        if framePTS.contains(where: { $0 == nil }) { p.append("\(name): a decoded frame has no pts") }
        let pts = framePTS.compactMap { $0 }
        if let i = pts.indices.dropFirst().first(where: { pts[$0] <= pts[$0 - 1] }) {
            p.append("\(name): decoded pts not strictly increasing at frame \(i): \(pts[i - 1]) then \(pts[i])")
        }
        let sorted = packets.compactMap(\.pts).sorted()
        if let i = sorted.indices.dropFirst().first(where: { sorted[$0] == sorted[$0 - 1] }) {
            p.append("\(name): two packets share pts \(sorted[i])")
        }
        let dts = packets.compactMap(\.dts)
        if let i = dts.indices.dropFirst().first(where: { dts[$0] <= dts[$0 - 1] }) {
            p.append("\(name): packet dts not strictly increasing at packet \(i): \(dts[i - 1]) then \(dts[i])")
        }
        if packets.count != expected { p.append("\(name): \(packets.count) packets, expected \(expected)") }
        return p
    }
}

/// Problems found on several threads, collected for the test's thread to report.
final class ProblemList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ new: [String]) { lock.withLock { items += new } }
    var all: [String] { lock.withLock { items } }
}
