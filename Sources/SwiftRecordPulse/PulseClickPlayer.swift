internal import CPulse
import Foundation
import SwiftRecord

/// TEST INSTRUMENT (`--simulate-click-player SINK`): plays a 2-ms click into a PulseAudio
/// sink at the host time of each of the live synthetic scene's flashes, so a recording of
/// that sink's monitor can be checked for A/V sync through a real server: the click goes
/// out through a playback stream, the sink, its monitor and `PulseAudioSource`, and must
/// land on its flash in the file.
///
/// Where a sample will be heard: when libpulse asks for more (the write callback, on the
/// mainloop thread), the server's last timing report says how long a sample written now
/// waits before the sink plays it (`heardAfter`); the first sample written goes out at
/// `now + that wait`, and a click is placed in the buffer at its flash's offset from that
/// time. The stream keeps
/// 200 ms buffered: flashes are known ahead (they follow frame 0 on the frame grid), and
/// a busy machine must not starve the sink (an underrun would skip clicks and make the
/// server raise the latency under the recording).
package final class PulseClickPlayer: Sendable {
    static let rate = 48_000
    static let clickFrames = rate / 500
    static let bufferNs: Int64 = 200_000_000

    private let client: PulseClient
    private let context: Context
    private let created: Locked<OpaquePointer?>

    /// What the write callback keeps between calls (mainloop thread).
    final class Context: Sendable {
        struct State {
            /// The next flash whose click is still to be written (flash k is at tick k × the flash interval).
            var nextFlash = 0
            /// Samples of a click that did not fit in the last buffer.
            var clickLeft = 0
        }
        let state = Locked(State())
        let flashClock: SyntheticFlashClock
        let flashPeriodNs: Double
        let toneFrequency: Double?

        init(flashClock: SyntheticFlashClock, frameRate: Rational) {
            self.flashClock = flashClock
            toneFrequency = nil
            flashPeriodNs = 1e9 * Double(frameRate.denominator) / Double(frameRate.numerator) * Double(SyntheticScene.flashInterval)
        }

        /// A steady tone instead of clicks (`init(toneFrequency:sink:server:)`).
        init(toneFrequency: Double) {
            flashClock = SyntheticFlashClock()
            flashPeriodNs = 0
            self.toneFrequency = toneFrequency
        }

        /// The tone's next sample; only the mainloop thread's write callback renders.
        private let tonePhase = Locked(0)

        /// Fills `frames` stereo s16 frames whose first is heard at `startNs` (host time).
        func render(frames: Int, startNs: Int64) -> [Int16] {
            var out = [Int16](repeating: 0, count: frames * 2)
            if let toneFrequency {
                tonePhase.withLock { phase in
                    for k in 0..<frames {
                        let v = Int16(0.5 * 32_767 * sin(2 * Double.pi * toneFrequency * Double(phase + k) / Double(PulseClickPlayer.rate)))
                        (out[2 * k], out[2 * k + 1]) = (v, v)
                    }
                    phase = (phase + frames) % PulseClickPlayer.rate
                }
                return out
            }
            guard let zero = flashClock.frameZeroTime?.convertScale(1_000_000_000).value else { return out }
            state.withLock { s in
                var at = 0
                func click(from start: Int, count: Int, phase: Int) {
                    for k in 0..<count where start + k < frames {
                        let v = Int16(0.9 * 32_767 * sin(2 * Double.pi * 3000 * Double(phase + k) / Double(PulseClickPlayer.rate)))
                        out[2 * (start + k)] = v
                        out[2 * (start + k) + 1] = v
                    }
                }
                if s.clickLeft > 0 {
                    let n = min(s.clickLeft, frames)
                    click(from: 0, count: n, phase: PulseClickPlayer.clickFrames - s.clickLeft)
                    s.clickLeft -= n
                    at = n
                }
                let endNs = startNs + Int64(Double(frames) * 1e9 / Double(PulseClickPlayer.rate))
                while true {
                    let flashNs = zero + Int64(Double(s.nextFlash) * flashPeriodNs)
                    if flashNs >= endNs { break }
                    s.nextFlash += 1
                    // A flash already heard-time past (the player started late) is skipped.
                    guard flashNs >= startNs else { continue }
                    let offset = max(at, Int((Double(flashNs - startNs) / 1e9 * Double(PulseClickPlayer.rate)).rounded()))
                    let n = min(PulseClickPlayer.clickFrames, frames - offset)
                    click(from: offset, count: n, phase: 0)
                    s.clickLeft = PulseClickPlayer.clickFrames - n
                    at = offset + n
                }
            }
            return out
        }

        /// How long a sample written now waits before the sink plays it, from the server's
        /// last timing report alone: the sink's latency, plus what was queued ahead of the
        /// write index when the report was taken, less the time played since. Not
        /// `pa_stream_get_latency`: with timing updates 1.5 s apart it interpolates through
        /// libpulse's smoother, whose estimate can wander for seconds after a stall (the
        /// likely cause of the 79-ms excursion in bench/results/av-sync.md, during which
        /// the recorder's own offset stayed within 7.6 ms). nil before the first report, or
        /// when an index is unknown.
        static func heardAfter(_ stream: OpaquePointer) -> Int64? {
            guard let info = pa_stream_get_timing_info(stream)?.pointee,
                  info.write_index_corrupt == 0, info.read_index_corrupt == 0 else { return nil }
            var taken = info.timestamp
            let queuedUs = (info.write_index - info.read_index) * 1_000_000 / Int64(PulseClickPlayer.rate * 4)
            let playedUs = info.playing != 0 ? Int64(clamping: pa_timeval_age(&taken)) : 0
            let waitUs = Int64(clamping: info.sink_usec) + queuedUs - playedUs
            // Past the queued data (an underrun since the report): unknown until the next one.
            return waitUs > 0 ? waitUs * 1000 : nil
        }

        static let writable: pa_stream_request_cb_t = { stream, bytes, userdata in
            guard let stream, let userdata else { return }
            Unmanaged<Context>.fromOpaque(userdata)._withUnsafeGuaranteedRef { context in
                let waitNs = heardAfter(stream) ?? PulseClickPlayer.bufferNs
                let frames = bytes / 4
                guard frames > 0 else { return }
                let samples = context.render(frames: frames, startNs: MonotonicClock.nanoseconds() + waitNs)
                samples.withUnsafeBytes { raw in
                    _ = pa_stream_write(stream, raw.baseAddress, raw.count, nil, 0, PA_SEEK_RELATIVE)
                }
            }
        }
    }

    /// Starts playing into `sink` (silence until the scene's frame 0, then a click on every flash).
    package convenience init(sink: String, flashClock: SyntheticFlashClock, frameRate: Rational, server: String? = nil) throws(SwiftRecordError) {
        try self.init(context: Context(flashClock: flashClock, frameRate: frameRate), sink: sink, server: server, name: "swift-record click player")
    }

    /// EXAMPLE INSTRUMENT: plays a steady `toneFrequency` sine at half scale into `sink`
    /// (nil: the server's default sink) from this process, as an application's own sound
    /// (Examples/ReplayKitWriter: what ReplayKit's `.audioApp` records).
    package convenience init(toneFrequency: Double, sink: String? = nil, server: String? = nil, name: String = "swift-record tone") throws(SwiftRecordError) {
        try self.init(context: Context(toneFrequency: toneFrequency), sink: sink, server: server, name: name)
    }

    private init(context: Context, sink: String?, server: String?, name: String) throws(SwiftRecordError) {
        client = try PulseClient(server: server, timeout: PulseAudioSource.startTimeout, applicationName: name)
        self.context = context
        let userdata = Unmanaged.passUnretained(context).toOpaque()
        let made = try client.withMainloop { (pa: OpaquePointer) throws(SwiftRecordError) -> OpaquePointer in
            var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(PulseClickPlayer.rate), channels: 2)
            guard let stream = pa_stream_new(pa, context.toneFrequency == nil ? "clicks" : "tone", &spec, nil) else {
                throw SwiftRecordError(.io, operation: "pa_stream_new", message: PulseClient.text(pa_context_errno(pa)))
            }
            pa_stream_set_write_callback(stream, Context.writable, userdata)
            let target = UInt32(pa_usec_to_bytes(pa_usec_t(PulseClickPlayer.bufferNs / 1000), &spec))
            var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: target, prebuf: UInt32.max, minreq: UInt32.max, fragsize: UInt32.max)
            let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue)
            guard pa_stream_connect_playback(stream, sink, &attributes, flags, nil, nil) >= 0 else {
                let code = pa_context_errno(pa)
                pa_stream_set_write_callback(stream, nil, nil)
                pa_stream_unref(stream)
                throw SwiftRecordError(.io, operation: "pa_stream_connect_playback", message: "cannot play into '\(sink ?? "the default sink")': \(PulseClient.text(code))")
            }
            return stream
        }
        created = Locked(made)
    }

    deinit { stop() }

    /// Stops playing and closes the connection; later calls do nothing.
    package func stop() {
        // Lock order: this lock, then the mainloop's (the write callback takes only the latter).
        created.withLock { (s: inout OpaquePointer?) in
            guard let stream = s else { return }
            s = nil
            _ = try? client.withMainloop { _ in
                pa_stream_set_write_callback(stream, nil, nil)
                pa_stream_disconnect(stream)
                pa_stream_unref(stream)
            }
        }
        client.close()
    }
}
