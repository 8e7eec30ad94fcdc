import SwiftRecord
import SwiftRecordX11

// FAULT-INJECTION: the damage-capture tests' instrument (`--simulate-x11-workload`).

/// The x11 source stepped by a test workload: before each grab the workload paints its
/// next step (and waits for the server), and the source is taken as offline, so frame n of
/// the file is step n's screen however busy the machine is. Two recordings of one
/// workload, whole grabs and damage grabs, can then be compared frame for frame.
final class SteppedWorkloadSource: CaptureSource {
    let base: any CaptureSource
    private struct State {
        let workload: X11TestWorkload
        var step = 0
    }
    private let state: Locked<State>

    init(base: any CaptureSource, workload: consuming sending X11TestWorkload) {
        self.base = base
        state = Locked(State(workload: workload))
    }

    var identifier: String { base.identifier }
    var nativeSize: VideoSize { base.nativeSize }
    var pixelFormat: PixelFormat { base.pixelFormat }
    var nativeFrameRate: Rational? { base.nativeFrameRate }
    let isLive = false
    var captureDescription: String? { base.captureDescription }
    var notices: [String] { base.notices }
    var grabStatistics: GrabStatistics? { base.grabStatistics }

    func start() throws { try base.start() }
    func stop() { base.stop() }

    func nextFrame(from pool: PixelBufferPool) throws -> CapturedFrame? {
        try state.withLock { (s: inout sending State) throws(SwiftRecordError) in
            try s.workload.paint(step: s.step)
            s.step += 1
        }
        return try base.nextFrame(from: pool)
    }
}
