@testable import SwiftRecord
import XCTest

/// The live loop's decisions on a fake clock (`LiveSchedulerWorld`): stalls of the source and
/// of the encoder, gaps, pauses, the content gate, stops and stuck sources, each in a few
/// milliseconds. (A few real-time recordings prove the real clock is wired in:
/// CaptureSessionTests, ConstantRateStallTests, the X11 and Wayland recordings.)
final class LiveSchedulerTests: XCTestCase {
    typealias World = LiveSchedulerWorld
    let s = World.second

    /// Presentation times k/fps for k in `range`, in seconds.
    func grid(_ range: Range<Int>, fps: Double = 30) -> [Double] { range.map { Double($0) / fps } }

    /// The picture each tick of the file shows (at 30 fps), by tick.
    func shownPictures(_ out: World.Outcome) -> [Int64: Int] {
        Dictionary(uniqueKeysWithValues: out.effects.appended.map { (Int64(($0.time.seconds * 30).rounded()), $0.picture) })
    }

    func testPromptGrabsGiveOneNewPictureForEveryTick() {
        let out = World(frames: 120).run()
        XCTAssertNil(out.failure)
        XCTAssertEqual(out.times, grid(0..<120))
        XCTAssertEqual(out.effects.appended.map(\.picture), Array(0..<120))
        XCTAssertEqual(out.statistics.framesCaptured, 120)
        XCTAssertEqual(out.statistics.framesRepeated, 0)
        XCTAssertEqual(out.statistics.mediaSeconds, 4, accuracy: 1e-9)
    }

    func testAHalfSecondSourceStallIsFilledWithRepeatsToOneFramePerTick() {
        var world = World(frames: 120)
        world.grabTime = { index, _ in index == 30 ? World.ms(500) : World.ms(2) }
        let out = world.run()
        XCTAssertEqual(out.times, grid(0..<120), "120 ticks, 120 frames")
        XCTAssert((14...15).contains(out.statistics.framesRepeated), "\(out.statistics.framesRepeated) repeats")
        XCTAssertEqual(out.statistics.framesRepeated, out.effects.reasons("repeated"))
        XCTAssertEqual(out.statistics.framesCaptured + out.statistics.framesRepeated, 120)
        XCTAssertEqual(out.statistics.ticksInGaps, 0)
    }

    func testAHalfSecondEncoderStallIsFilledLateWithoutAGap() {
        var world = World(frames: 120)
        world.effects.stalls = [World.start + s ..< World.start + s + World.ms(500)]
        let out = world.run()
        XCTAssertEqual(out.times, grid(0..<120), "120 ticks, 120 frames, in order")
        XCTAssertEqual(out.statistics.framesCaptured, 120, "every tick kept its own picture")
        XCTAssert((14...16).contains(out.statistics.ticksFilled), "\(out.statistics.ticksFilled) filled")
        XCTAssertEqual(out.statistics.ticksFilled, out.effects.reasons("filled"))
        XCTAssertEqual(out.statistics.ticksInGaps, 0)
        XCTAssertGreaterThan(out.effects.roomWatches, 0, "the writer's free slot wakes the loop")
        let late = out.effects.appended.filter { $0.at == World.start + s + World.ms(500) }
        XCTAssertGreaterThan(late.count, 10, "the held frames go as soon as there is room")
    }

    func testAStallPastTheFillLimitLeavesItsOldestTicksAsAGap() {
        var world = World(fill: .seconds(2), frames: 180)
        world.effects.stalls = [World.start + s ..< World.start + 4 * s]
        let out = world.run()
        let st = out.statistics
        XCTAssert((29...31).contains(st.ticksInGaps), "\(st.ticksInGaps) ticks in gaps")
        XCTAssertEqual(st.ticksInGaps, out.effects.reasons("gap"))
        XCTAssertEqual(st.framesWritten + st.ticksInGaps, 180, "every tick written or counted")
        XCTAssertEqual(out.times, out.times.sorted())
        // The gap is the oldest waiting ticks: right after the stall began.
        let missing = Set(grid(0..<180)).subtracting(out.times).sorted()
        XCTAssertEqual(missing.first ?? 0, 1.0, accuracy: 0.05)
        XCTAssertEqual(missing, grid(Int((missing.first ?? 0) * 30)..<Int((missing.first ?? 0) * 30) + missing.count))
        XCTAssertEqual(st.mediaSeconds, 6, accuracy: 1e-9)
    }

    func testPauseEndsTheEncoderRunAndResumeGoesOnWithoutAGap() {
        var world = World()
        world.pauses = [s ..< 3 * s]
        world.stopAfter = 4 * s
        let out = world.run()
        let st = out.statistics
        XCTAssert((59...61).contains(st.framesWritten), "\(st.framesWritten) frames for 2 s not paused")
        XCTAssertEqual(out.times, grid(0..<st.framesWritten), "no gap in the file")
        XCTAssertEqual(st.pauses, 1)
        XCTAssertEqual(st.pausedSeconds, 2, accuracy: 0.04)
        XCTAssertFalse(st.isPaused)
        XCTAssertEqual(out.effects.runEnds.count, 1, "the encoder's run ends once, at the pause")
        let pausedAt = out.effects.log.first { $0.reason == "paused" }?.presentationTime
        XCTAssertEqual(out.effects.runEnds.first, pausedAt)
        XCTAssertEqual(out.effects.runEnds.first?.seconds ?? 0, 1, accuracy: 0.05)
        XCTAssertEqual(out.effects.reasons("resumed"), 1)
        XCTAssertEqual(out.effects.grabsRequested.filter { $0.at > World.start + s + World.ms(40) && $0.at < World.start + 3 * s }.count, 0,
                       "no grabs while paused")
    }

    func testTheContentGateLeavesOutUnchangedTicksButWritesEveryChangeAndAKeyPerInterval() {
        var world = World(frames: 150, gate: ContentFrameGate(maximumTicks: 30, settles: false))
        let changes: Set<Int64> = [0, 45, 100]
        world.grabOutcome = { i, t in .picture(Int(i), captureTime: World.time(t), unchanged: !changes.contains(i)) }
        let out = world.run()
        let st = out.statistics
        let written = out.effects.appended.map { Int64($0.picture) }
        XCTAssert(changes.isSubset(of: written), "every change is written: \(written)")
        XCTAssertEqual(st.framesWritten + st.ticksUnchanged, 150)
        XCTAssertEqual(st.ticksUnchanged, out.effects.reasons("unchanged"))
        XCTAssertGreaterThan(st.ticksUnchanged, 130)
        for (a, b) in zip(written, written.dropFirst()) { XCTAssertLessThanOrEqual(b - a, 30, "a frame at least every interval") }
        XCTAssertEqual(st.mediaSeconds, 5, accuracy: 1e-9, "left-out ticks still count as media")
    }

    func testAStopDuringAnEncoderStallWritesEveryHeldFrame() {
        var world = World()
        world.effects.stalls = [World.start + s ..< World.start + 10 * s]
        world.stopAfter = s + World.ms(500)
        let out = world.run()
        XCTAssertEqual(out.times, grid(0..<out.times.count))
        XCTAssert((45...46).contains(out.times.count), "\(out.times.count) frames in 1.5 s")
        XCTAssertEqual(out.statistics.ticksInGaps, 0)
        XCTAssertTrue(out.scheduler.stopped)
    }

    func testASourceStuckPastTheLimitEndsTheRecordingThereAndSaysSo() {
        var world = World(frames: 90)
        world.grabTime = { index, _ in index == 30 ? nil : World.ms(2) }
        let out = world.run()
        guard case .sourceStuck(let since)? = out.failure else { return XCTFail("\(String(describing: out.failure))") }
        XCTAssertEqual(Double(since - World.start) / 1e9, 1, accuracy: 0.04, "stuck since the grab for frame 30")
        XCTAssertEqual(out.times, grid(0..<30), "the file ends at the last picture")
        XCTAssertEqual(out.statistics.ticksMissed, 60)
        XCTAssertEqual(out.effects.reasons("missed-source-stuck"), 60)
        XCTAssertEqual(out.scheduler.endTick, 90, "the pictures end at the limit")
    }

    func testAStopWhileTheSourceIsStuckEndsAtOnceAndSaysSo() {
        var world = World()
        world.grabTime = { index, _ in index >= 30 ? nil : World.ms(2) }
        world.stopAfter = 3 * s
        let out = world.run()
        guard case .sourceStuck? = out.failure else { return XCTFail("\(String(describing: out.failure))") }
        XCTAssertEqual(out.times, grid(0..<30))
        XCTAssertTrue(out.scheduler.stopped)
    }

    func testASourceThatGivesNoFirstPictureFailsAfterTheTimeout() {
        var world = World()
        world.grabTime = { _, _ in nil }
        let out = world.run()
        XCTAssertEqual(out.failure, .noFirstPicture)
        XCTAssertEqual(out.effects.grabsRequested.count, 1, "one grab, waited for, not a busy loop")
        XCTAssertTrue(out.effects.appended.isEmpty)
    }

    func testAStopBeforeTheFirstPictureIsACancelNotATimeout() {
        var world = World()
        world.grabTime = { _, _ in nil }
        world.stopAfter = s
        XCTAssertEqual(world.run().failure, .stoppedBeforeFirstPicture)
    }

    func testNoFreeCaptureBufferRepeatsTheTickAndGrabsNoSoonerThanItsClose() {
        var world = World(frames: 60)
        world.grabOutcome = { i, t in i == 10 ? .noBuffer : .picture(Int(i), captureTime: World.time(t), unchanged: false) }
        let out = world.run()
        XCTAssertEqual(out.times, grid(0..<60))
        XCTAssertEqual(out.statistics.framesDropped, 1)
        XCTAssertEqual(out.effects.reasons("dropped-no-buffer"), 1)
        XCTAssertGreaterThanOrEqual(out.statistics.framesRepeated, 1)
        let requests = out.effects.grabsRequested
        guard let i = requests.firstIndex(where: { $0.frame == 10 }), i + 1 < requests.count else { return XCTFail("no grab after the refused one") }
        let tickCloses = World.start + Int64((10.5 / 30) * 1e9)
        XCTAssertGreaterThanOrEqual(requests[i + 1].at, tickCloses, "no new grab before the tick closes")
    }

    /// The ticks that close while a grab is late are logged as repeats of the picture before
    /// (its capture time); the file must show that picture there too, not the late one
    /// before it was captured.
    func testTicksClosingDuringALateGrabShowThePictureBeforeAsTheLogSays() {
        var world = World(frames: 40)
        world.grabTime = { index, _ in index == 20 ? World.ms(110) : World.ms(2) }
        let out = world.run()
        XCTAssertEqual(out.times, grid(0..<40))
        let shown = shownPictures(out)
        let repeated = out.effects.log.filter { $0.reason == "repeated" }.compactMap(\.frame)
        XCTAssertEqual(repeated, [20, 21, 22], "the ticks the late grab missed")
        let around = (Int64(18)...24).map { "\($0): \(shown[$0].map(String.init) ?? "-")" }.joined(separator: ", ")
        for tick in repeated { XCTAssertEqual(shown[tick], shown[tick - 1], "tick \(tick) is logged as a repeat; tick: picture \(around)") }
        XCTAssertEqual(shown[19], 19)
        XCTAssertEqual(shown[23], 20, "the late picture from its own tick on")
    }

    /// A pause asked for while a grab is out takes effect when the grab returns (between
    /// grabs, as ever), at that time: the picture it brings, captured before then, is the
    /// last one before the pause, not dropped as paused behind repeats of the one before.
    func testAPauseAskedForDuringALateGrabKeepsThePictureTheGrabBrings() {
        var world = World()
        world.grabTime = { index, _ in index == 20 ? World.ms(110) : World.ms(2) }
        // The late grab captured its picture as it began; converting it took the rest.
        world.grabOutcome = { i, t in .picture(Int(i), captureTime: World.time(i == 20 ? t - World.ms(108) : t), unchanged: false) }
        world.pauses = [World.ms(700) ..< World.ms(1700)]
        world.stopAfter = World.ms(2500)
        let out = world.run()
        XCTAssertNil(out.failure)
        XCTAssertEqual(out.times, grid(0..<out.times.count), "no gap in the file")
        let shown = shownPictures(out)
        XCTAssertEqual(shown[20], 20, "the late grab's picture on its own tick")
        XCTAssertEqual(shown[22], 20, "the ticks up to the pause repeat it")
        XCTAssertEqual(out.effects.reasons("dropped-paused"), 0)
        XCTAssertEqual(out.statistics.pauses, 1)
        let pausedAt = out.effects.log.first { $0.reason == "paused" }?.hostTime ?? 0
        let returned = (out.effects.grabsRequested.first { $0.frame == 20 }?.at ?? 0) + World.ms(110) - World.start
        XCTAssertEqual(pausedAt, Double(returned) / 1e9, accuracy: 1e-6, "the pause comes when the grab returns")
    }

    /// Another process's sender: its pictures wait in the source, in order, each with its own
    /// time (due once the clock reaches it). A capture thread held up 300 ms (here one slow
    /// grab) takes the pictures it missed onto their own ticks when the ticks close the
    /// source's `arrivalAllowance` late; closing them on time repeats and drops instead.
    func testAQueuedSourceTakenLateStillPutsEveryPictureOnItsOwnTick() {
        final class Sender { var next = 0 }
        func world(allowance: Duration) -> World {
            var world = World(frames: 90)
            world.timing = CaptureTiming(frameRate: Rational(30)!, fillLimit: 60, frameLimit: 90, closeDelay: allowance)
            let sender = Sender(), first = World.start + World.ms(1)
            world.grabTime = { index, _ in index == 30 ? World.ms(300) : World.ms(1) }
            world.grabOutcome = { _, at in
                let time = first + Int64(sender.next) * World.second / 30
                guard time <= at else { return .notReady }
                defer { sender.next += 1 }
                return .picture(sender.next, captureTime: World.time(time), unchanged: false)
            }
            return world
        }
        let out = world(allowance: .milliseconds(500)).run()
        XCTAssertNil(out.failure)
        XCTAssertEqual(out.times, grid(0..<90))
        XCTAssertEqual(out.effects.appended.map(\.picture), Array(0..<90), "every picture on its own tick")
        XCTAssertEqual(out.statistics.framesRepeated, 0)
        XCTAssertEqual(out.statistics.framesDropped, 0, "nothing due yet is no drop")
        XCTAssertEqual(out.effects.reasons("dropped-no-buffer"), 0)
        // Closed on time, the ticks the slow grab spans repeat and their pictures come too late.
        let onTime = world(allowance: .zero).run()
        XCTAssertEqual(onTime.times, grid(0..<90))
        XCTAssertGreaterThanOrEqual(onTime.statistics.framesRepeated, 8)
        XCTAssertNotEqual(onTime.effects.appended.map(\.picture), Array(0..<90))
    }

    func testTheStopTimeIsWhereTheUserStoppedOnTheOutputClock() {
        var world = World(fps: 1)
        world.stopAfter = 2 * s + World.ms(250)
        let out = world.run()
        XCTAssertEqual(out.stopTime?.seconds ?? 0, 2.248, accuracy: 0.01, "2.25 s after the first picture (2 ms after the start)")
        XCTAssertEqual(out.times, [0, 1, 2])
    }

    func testTimingTurnsTheSessionsSettingsIntoTicksAndFrames() {
        let rate = Rational(30)!
        func timing(_ limit: CaptureLimit, fill: Duration = .seconds(2), mode: FrameRateMode = .constant) -> CaptureTiming {
            CaptureTiming(frameRate: rate, limit: limit, maximumFill: fill, mode: mode, settles: false, firstPictureTimeout: .seconds(5))
        }
        XCTAssertEqual(timing(CaptureLimit(duration: MediaTime(value: 3, timescale: 2))).frameLimit, 45)
        XCTAssertEqual(timing(CaptureLimit(duration: MediaTime(value: 151, timescale: 100))).frameLimit, 46, "a frame starting before the end")
        XCTAssertEqual(timing(CaptureLimit(frames: 10, duration: MediaTime(value: 2, timescale: 1))).frameLimit, 10)
        XCTAssertNil(timing(CaptureLimit()).frameLimit)
        XCTAssertEqual(timing(CaptureLimit()).fillLimit, 60)
        XCTAssertEqual(timing(CaptureLimit(), fill: .milliseconds(1)).fillLimit, 1, "at least one tick")
        XCTAssertNil(timing(CaptureLimit()).gate)
        XCTAssertEqual(timing(CaptureLimit(), mode: .content(maximumInterval: MediaTime(value: 1, timescale: 1))).gate?.maximumTicks, 30)
    }
}
