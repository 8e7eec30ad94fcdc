@testable import SwiftRecord
import XCTest

/// The world a `LiveScheduler` sees, simulated on a fake clock: a source whose grabs take
/// the time the test says (or never return), an encoder whose queue is full during the
/// test's stalls, the user's pauses and stop. `run()` drives the scheduler as the capture
/// thread does (turn, then sleep until its deadline or the next thing that would wake it),
/// jumping the clock from event to event, so seconds of recording take microseconds.
struct LiveSchedulerWorld {
    typealias Scheduler = LiveScheduler<Int>

    /// What the encoder side saw: appends, encoder-run ends, grabs asked for, log lines.
    struct Effects: LiveEffects {
        typealias Picture = Int
        var now: Int64 = 0
        /// The encoder's queue is full during these host times (nanoseconds).
        var stalls: [Range<Int64>] = []
        var appended: [(picture: Int, time: MediaTime, at: Int64)] = []
        var runEnds: [MediaTime] = []
        var grabsRequested: [(frame: Int64, at: Int64)] = []
        var log: [TimingEntry] = []
        var roomWatches = 0

        mutating func appendIfRoom(_ picture: Int, at time: MediaTime) throws -> Bool {
            if stalls.contains(where: { $0.contains(now) }) { return false }
            appended.append((picture, time, now))
            return true
        }
        mutating func appendWaiting(_ picture: Int, at time: MediaTime) throws { appended.append((picture, time, now)) }
        mutating func endEncoderRun(at time: MediaTime) throws { runEnds.append(time) }
        mutating func requestGrab(forFrame index: Int64) { grabsRequested.append((index, now)) }
        mutating func watchForRoom() { roomWatches += 1 }
        mutating func log(_ entry: TimingEntry) { log.append(entry) }
        var encodedCount: Int { appended.count }
        var appendedCount: Int { appended.count }
        func reasons(_ reason: String) -> Int { log.filter { $0.reason == reason }.count }
    }

    static let second: Int64 = 1_000_000_000
    static let start: Int64 = 1000 * second
    static func time(_ ns: Int64) -> MediaTime { MediaTime(value: ns, timescale: 1_000_000_000) }
    static func ms(_ milliseconds: Double) -> Int64 { Int64(milliseconds * 1e6) }

    var timing: CaptureTiming
    /// How long the grab for frame `index` asked for at host time `at` takes; nil: it never returns.
    var grabTime: (_ index: Int64, _ at: Int64) -> Int64? = { _, _ in LiveSchedulerWorld.ms(2) }
    /// What the grab brings (default: a new picture, captured as it returns, numbered by the frame asked for).
    var grabOutcome: (_ index: Int64, _ capturedAt: Int64) -> Scheduler.Grab = { i, t in
        .picture(Int(i), captureTime: LiveSchedulerWorld.time(t), unchanged: false)
    }
    /// Paused during these host times (from the start).
    var pauses: [Range<Int64>] = []
    /// When the user stops, from the start; nil: only the limit or the source ends it.
    var stopAfter: Int64?
    var effects = Effects()

    init(fps: Int32 = 30, fill: Duration = .seconds(2), frames: Int64? = nil, gate: ContentFrameGate? = nil) {
        timing = CaptureTiming(frameRate: Rational(fps)!,
                               fillLimit: Int(fill.components.seconds) * Int(fps) + Int(Double(fill.components.attoseconds) / 1e18 * Double(fps)),
                               frameLimit: frames, gate: gate)
    }

    /// What the recording ended with.
    struct Outcome {
        var scheduler: Scheduler
        var effects: Effects
        var failure: Scheduler.Failure?
        var stopTime: MediaTime?
        /// Presentation times of the appended frames, in seconds.
        var times: [Double] { effects.appended.map(\.time.seconds) }
        var statistics: CaptureStatistics { scheduler.statistics }
    }

    /// Runs the recording from `start` until it finishes (the limit, the source, or the stop).
    func run() -> Outcome {
        var scheduler = Scheduler(settings: timing, startingAt: LiveSchedulerWorld.time(LiveSchedulerWorld.start))
        var effects = self.effects
        var now = LiveSchedulerWorld.start
        var grab: Scheduler.Grab?
        var returning: (at: Int64, outcome: Scheduler.Grab)?
        var outstanding = false
        var served = 0
        var failure: Scheduler.Failure?
        let paused = { (t: Int64) in pauses.contains { $0.contains(t - LiveSchedulerWorld.start) } }
        let stopAt = stopAfter.map { LiveSchedulerWorld.start + $0 }
        do {
            for _ in 0..<1_000_000 {
                effects.now = now
                let next = try scheduler.turn(now: LiveSchedulerWorld.time(now), pauseRequested: paused(now), grab: grab, effects: &effects)
                grab = nil
                // A grab asked for: when it returns, and with what.
                if effects.grabsRequested.count > served, let asked = effects.grabsRequested.last {
                    served = effects.grabsRequested.count
                    outstanding = true
                    if let took = grabTime(asked.frame, asked.at) { returning = (asked.at + took, grabOutcome(asked.frame, asked.at + took)) }
                }
                guard case .wait(let deadline) = next else { break }
                if let r = returning, r.at <= now {
                    (grab, returning, outstanding) = (r.outcome, nil, false)
                    continue
                }
                // Sleep until the deadline or whatever would wake the capture thread first.
                var wake = [deadline, returning?.at, stopAt].compactMap { $0 }
                wake += pauses.flatMap { [$0.lowerBound, $0.upperBound] }.map { $0 + LiveSchedulerWorld.start }.filter { $0 > now }
                wake += effects.stalls.map(\.upperBound).filter { $0 > now }
                guard let until = wake.min() else { break }   // nothing would ever wake it
                now = max(now, until)
                if let stopAt, now >= stopAt { scheduler.stop() }
                if let r = returning, r.at <= now { (grab, returning, outstanding) = (r.outcome, nil, false) }
            }
            effects.now = now
            let stuck = outstanding && returning.map { $0.at > now + LiveSchedulerWorld.ms(1500) } ?? outstanding
            let stop = try scheduler.finish(now: LiveSchedulerWorld.time(now), grabStuck: stuck, effects: &effects)
            return Outcome(scheduler: scheduler, effects: effects, stopTime: stop)
        } catch let f as Scheduler.Failure {
            failure = f
        } catch {
            XCTFail("unexpected \(error)")
        }
        return Outcome(scheduler: scheduler, effects: effects, failure: failure)
    }
}
