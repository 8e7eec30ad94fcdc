import DequeModule
internal import CPulse
import Foundation
import SwiftRecord

/// What the stream's callbacks share with `nextChunk()`: the queue and what happened.
/// The callbacks run on libpulse's mainloop thread; everything they write is in `capture`.
final class StreamContext: Sendable {
    struct State {
        var queue: Deque<CapturedAudio> = []
        var queuedFrames = 0
        /// Frames delivered since the stream opened.
        var framesDelivered = 0
        var filter: PulseTimestampFilter
        /// Bytes of a partial frame, kept for the next fragment (libpulse hands out whole
        /// frames, but nothing is lost if it ever does not).
        var carry: [UInt8] = []
        /// Samples were lost since the last chunk: the next one says so.
        var pendingGap = false
        var gaps = 0
        var streamState = PA_STREAM_UNCONNECTED
        var wasReady = false
        var errorCode: Int32 = 0
        var ended = false
        var endReason: String?
        /// Recording one program's sound (`app:NAME`): when its stream goes (the program
        /// stopped playing, or closed the stream to open another), the source waits for the
        /// next one instead of ending (`detached`).
        var followsApplication = false
        /// The stream went with the program's; the follower attaches to the next.
        var detached = false
        var interrupted = false
        var stopping = false
        var deviceName: String?
        var description: String
        /// `app:`: the program's name as the server lists it (`application.name`, else its
        /// binary), once a stream of it was seen; for a process id not playing yet, its
        /// command name.
        var programName: String?
    }

    let capture: Locked<State>
    let format: AudioFormat
    let clock: any HostClock
    let maxQueuedFrames: Int
    let settleFrames: Int

    init(format: AudioFormat, clock: any HostClock, description: String) {
        self.format = format
        self.clock = clock
        maxQueuedFrames = format.sampleRate * PulseAudioSource.maxQueuedSeconds
        settleFrames = Int(Double(format.sampleRate) * PulseAudioSource.settleSeconds)
        capture = Locked(State(filter: PulseTimestampFilter(sampleRate: format.sampleRate), description: description))
    }

    private static func with(_ userdata: UnsafeMutableRawPointer?, _ body: (StreamContext) -> Void) {
        guard let userdata else { return }
        Unmanaged<StreamContext>.fromOpaque(userdata)._withUnsafeGuaranteedRef(body)
    }

    /// Removes every callback, so none reaches a context that is going away (mainloop lock held).
    static func detach(_ stream: OpaquePointer) {
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_read_callback(stream, nil, nil)
        pa_stream_set_overflow_callback(stream, nil, nil)
        pa_stream_set_suspended_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
    }

    static let stateChanged: pa_stream_notify_cb_t = { stream, userdata in
        guard let stream else { return }
        let state = pa_stream_get_state(stream)
        let code = pa_stream_get_context(stream).map { pa_context_errno($0) } ?? 0
        with(userdata) { context in
            context.capture.withLockNotifying { s in
                s.streamState = state
                if state == PA_STREAM_READY { s.wasReady = true }
                guard state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED else { return }
                s.errorCode = code
                let contextAlive = pa_stream_get_context(stream).map { pa_context_get_state($0) == PA_CONTEXT_READY } ?? false
                if s.followsApplication && contextAlive && !s.stopping {
                    // The program's stream went: silence until it plays again.
                    s.detached = true
                    s.pendingGap = true
                    return
                }
                if s.wasReady && !s.stopping && !s.ended {
                    s.ended = true
                    let device = s.deviceName.map { "'\($0)'" } ?? "the device"
                    switch Int(code) {
                    case Int(PA_ERR_KILLED.rawValue):
                        s.endReason = "the PulseAudio source \(device) went away (\(PulseClient.text(code)))"
                    case Int(PA_ERR_CONNECTIONTERMINATED.rawValue), Int(PA_ERR_CONNECTIONREFUSED.rawValue):
                        s.endReason = "the PulseAudio server went away while recording \(device) (\(PulseClient.text(code)))"
                    default:
                        s.endReason = "recording \(device) from PulseAudio failed (\(PulseClient.text(code)))"
                    }
                }
            }
        }
    }

    static let readable: pa_stream_request_cb_t = { stream, _, userdata in
        guard let stream else { return }
        with(userdata) { $0.read(stream) }
    }

    static let overflowed: pa_stream_notify_cb_t = { _, userdata in
        with(userdata) { $0.capture.withLock { $0.pendingGap = true } }
    }

    static let suspendedOrResumed: pa_stream_notify_cb_t = { _, userdata in
        with(userdata) { $0.capture.withLock { $0.pendingGap = true } }
    }

    static let moved: pa_stream_notify_cb_t = { stream, userdata in
        guard let stream else { return }
        let name = pa_stream_get_device_name(stream).map { String(cString: $0) }
        with(userdata) { context in
            context.capture.withLock { s in
                s.pendingGap = true
                if let name, name != s.deviceName {
                    s.description = "source '\(name)' (moved there from \(s.deviceName.map { "'\($0)'" } ?? "another"))"
                    s.deviceName = name
                }
            }
        }
    }

    /// Takes every fragment the server has delivered (mainloop thread, its lock held).
    func read(_ stream: OpaquePointer) {
        let bytesPerFrame = format.bytesPerFrameInPlane
        while true {
            var data: UnsafeRawPointer?
            var length = 0
            guard pa_stream_peek(stream, &data, &length) >= 0, length > 0 else { return }
            guard let data else {
                // A hole: samples the server does not have. Skipped; the next chunk says so.
                pa_stream_drop(stream)
                capture.withLock { $0.pendingGap = true }
                continue
            }
            // The latency is taken before the drop: it is the age of this fragment's first sample.
            var latency: pa_usec_t = 0
            var negative: Int32 = 0
            let timed = pa_stream_get_latency(stream, &latency, &negative) >= 0
            let now = clock.now().convertScale(1_000_000_000).value
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: length))
            pa_stream_drop(stream)
            let latencyNanoseconds: Int64? = timed ? Int64(clamping: latency) * 1000 * (negative != 0 ? -1 : 1) : nil
            enqueue(bytes, capturedBefore: now, latency: latencyNanoseconds, bytesPerFrame: bytesPerFrame)
        }
    }

    private func enqueue(_ fragment: [UInt8], capturedBefore now: Int64, latency: Int64?, bytesPerFrame: Int) {
        capture.withLockNotifying { s in
            var bytes = fragment
            if !s.carry.isEmpty {
                bytes = s.carry + fragment
                s.carry = []
            }
            let whole = bytes.count - bytes.count % bytesPerFrame
            if whole < bytes.count {
                s.carry = Array(bytes[whole...])
                bytes.removeLast(bytes.count - whole)
            }
            let frames = whole / bytesPerFrame
            guard frames > 0 else { return }
            let duration = Int64(frames) * 1_000_000_000 / Int64(format.sampleRate)
            // libpulse's estimate is trusted once it has settled (see `settleSeconds`);
            // before that, the fragment is taken to have just been captured.
            let settled = s.framesDelivered >= settleFrames
            let measured = now - ((settled ? latency : nil) ?? duration)
            let time = s.filter.timestamp(measured: measured, frames: frames, gap: s.pendingGap, trusted: settled && latency != nil)
            s.framesDelivered += frames
            if s.pendingGap { s.gaps += 1 }
            s.pendingGap = false
            guard let samples = try? AudioSampleBuffer(format: format, presentationTimeStamp: MediaTime(value: time.nanoseconds, timescale: 1_000_000_000),
                                                       planes: [bytes]) else { return }
            s.queue.append(CapturedAudio(samples: samples, followsGap: time.followsGap))
            s.queuedFrames += frames
            // Nobody is reading: the oldest go, and the chunk after them says so.
            while s.queuedFrames > maxQueuedFrames, s.queue.count > 1 {
                let dropped = s.queue.removeFirst()
                s.queuedFrames -= dropped.samples.frameCount
                s.gaps += 1
                let next = s.queue[0]
                s.queue[0] = CapturedAudio(samples: next.samples, followsGap: true)
            }
        }
    }
}
