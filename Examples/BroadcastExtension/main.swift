// A "broadcast upload extension" on Linux: renders the synthetic scene into the recorder's
// shared buffers and sends it with an app tone (440 Hz) and a microphone tone (660 Hz), each
// clicking on the scene's flashes, to `swift-record --source broadcast:NAME`.
//
//     BroadcastExtension NAME [--size 1920x1080] [--fps 30] [--seconds N] [--pause-at S --pause-for S]
//
// --pause-at S pauses the broadcast (broadcastPaused) after S seconds of frames, for
// --pause-for seconds, sending nothing meanwhile, then resumes it (broadcastResumed): the
// scene's frame numbers continue where they stopped.
//
// Exit status: 0 when every frame was handed over (or dropped for want of a free buffer,
// counted), 1 when the recorder refused or went away (said on stderr).
//
// It links neither FFmpeg nor Foundation (a broadcast extension's memory is capped at 50 MB):
// the sender is SwiftRecordBroadcastWire's, the scene SwiftRecordScene's drawing, the
// rest Glibc.
import Glibc
import SwiftRecordBroadcastWire
import SwiftRecordScene

func fail(_ message: String) -> Never {
    let line = Array("BroadcastExtension: \(message)\n".utf8)
    _ = write(STDERR_FILENO, line, line.count)
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else { fail("usage: BroadcastExtension NAME [--size WxH] [--fps N] [--seconds N]") }
arguments.removeFirst()
var size = (width: 1920, height: 1080)
var fps = 30
var seconds = 5.0
var pauseAt: Double?
var pauseFor = 1.0
while arguments.count >= 2 {
    let (option, value) = (arguments[0], arguments[1])
    arguments.removeFirst(2)
    switch option {
    case "--size":
        let parts = value.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { fail("--size \(value): expected WIDTHxHEIGHT") }
        size = (parts[0], parts[1])
    case "--fps": fps = Int(value) ?? 30
    case "--seconds": seconds = Double(value) ?? seconds
    case "--pause-at": pauseAt = Double(value)
    case "--pause-for": pauseFor = Double(value) ?? pauseFor
    default: fail("unknown option \(option)")
    }
}

guard fps > 0 else { fail("--fps \(fps): expected a positive number of frames a second") }
let stream = BroadcastSampleHandler.Stream(width: size.width, height: size.height, frameRateNumerator: fps, sampleRate: 48_000, channels: 2)
let handler = BroadcastSampleHandler(name: name, stream: stream)
guard let scene = SceneDrawing(width: size.width, height: size.height) else {
    fail("--size \(size.width)x\(size.height) is not usable; \(SceneDrawing.sizeRule)")
}
do {
    try handler.broadcastStarted(withSetupInfo: ["name": "BroadcastExtension"])
} catch {
    fail("\(error)")
}

/// 10 ms of a tone at `frequency`, clicking where frame `n`'s flash falls (every 30 frames).
func tone(_ frequency: Double, first sample: Int, fps: Int) -> [Int16] {
    let rate = 48_000.0, period = Double(SceneDrawing.flashInterval) / Double(fps)
    var out = [Int16](repeating: 0, count: 480 * 2)
    for i in 0..<480 {
        let n = sample + i, t = Double(n) / rate
        let sinceFlash = t.truncatingRemainder(dividingBy: period)
        var v = 0.1 * sin(2 * .pi * frequency * t)
        if sinceFlash < 0.002 { v = (Int(sinceFlash * rate) % 8) < 4 ? 0.9 : -0.9 }
        out[2 * i] = Int16(v * 32_767)
        out[2 * i + 1] = out[2 * i]
    }
    return out
}

/// This thread's CPU time in nanoseconds: what the hand-over costs, whatever else the machine runs.
func threadCPUTime() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

// Presentation times: nanoseconds of CLOCK_MONOTONIC, the recorder's clock.
var start = BroadcastSampleHandler.now() + 20_000_000
let frameNs = Int64(1_000_000_000) / Int64(fps)
let frames = Int(seconds * Double(fps))
var sample = 0
var handoverNs: Int64 = 0
let pauseFrame = pauseAt.map { Int($0 * Double(fps)) }
for n in 0..<frames {
    if n == pauseFrame {
        do {
            try handler.broadcastPaused()
            usleep(UInt32(pauseFor * 1_000_000))
            try handler.broadcastResumed()
        } catch { fail("\(error)") }
        // The frames after the pause are presented from now on.
        start += Int64(pauseFor * 1e9)
    }
    let due = start + Int64(n) * frameNs
    // Sound up to this frame's time, in 10 ms chunks.
    while Int64(sample) * 1_000_000_000 / 48_000 <= Int64(n) * frameNs {
        let at = start + Int64(sample) * 1_000_000_000 / 48_000
        do {
            try handler.processAudio(tone(440, first: sample, fps: fps), presentationTime: at, with: BroadcastSampleType.audioApp)
            try handler.processAudio(tone(660, first: sample, fps: fps), presentationTime: at, with: BroadcastSampleType.audioMic)
        } catch { fail("\(error)") }
        sample += 480
    }
    do {
        let t0 = threadCPUTime()
        if let picture = try handler.nextPicture() {
            let t1 = threadCPUTime()
            scene.draw(frame: n, into: ScenePlanes(y: picture.y, u: picture.u, v: picture.v, yBytesPerRow: picture.yBytesPerRow,
                                                   uBytesPerRow: picture.uBytesPerRow, vBytesPerRow: picture.vBytesPerRow),
                       flash: SceneDrawing.flashes(frame: n))
            let t2 = threadCPUTime()
            try handler.processSampleBuffer(picture, presentationTime: due, with: BroadcastSampleType.video)
            // The hand-over: taking a buffer and sending it, the rendering between not counted.
            handoverNs += (t1 - t0) + (threadCPUTime() - t2)
        }
    } catch { fail("\(error)") }
    let now = BroadcastSampleHandler.now()
    if due + frameNs > now { usleep(UInt32((due + frameNs - now) / 1000)) }
}
do { try handler.broadcastFinished() } catch { fail("\(error)") }
let counts = handler.counts
print("sent \(counts.framesSent) frames, dropped \(counts.framesDropped), \(counts.soundChunksSent) sound chunks")
print("hand-over: \(handoverNs / Int64(max(1, counts.framesSent)) / 1000) µs a frame (CPU time)")
