internal import CPulse
import Foundation
import SwiftRecord

/// Starting: the device resolved, the record stream made and waited for, and released.
extension PulseAudioSource {
    struct Device {
        var name: String
        var description: String
    }

    /// The source to record: the one named (resolved, so `@DEFAULT_MONITOR@` becomes its
    /// real name) or the default sink's monitor.
    func resolveDevice(_ client: PulseClient) throws(SwiftRecordError) -> Device {
        if let requested = requestedDevice {
            if let found = try client.source(named: requested) {
                return Device(name: found.name, description: PulseAudioSource.describe(found))
            }
            var hint = ""
            if let monitor = try? client.monitorSource(ofSink: requested) {
                hint = "; '\(requested)' is a sink: record what it plays with pulse:\(monitor)"
            }
            let names = ((try? client.sources()) ?? []).map(\.name)
            throw SwiftRecordError(.invalidArgument, operation: "pulse",
                                   message: "PulseAudio at \(client.serverDescription) has no source named '\(requested)'\(hint); expected one of: \(names.isEmpty ? "(none)" : names.joined(separator: ", ")) (see --list-audio-devices)")
        }
        let info = try client.serverInfo()
        guard let sink = info.defaultSink, let monitor = try client.monitorSource(ofSink: sink) else {
            throw SwiftRecordError(.io, operation: "pulse",
                                   message: "PulseAudio at \(client.serverDescription) has no default sink whose monitor could record what you hear; name a source with pulse:DEVICE (see --list-audio-devices) or use --audio none")
        }
        return Device(name: monitor, description: "monitor of the default sink '\(sink)' (\(monitor))")
    }

    static func describe(_ source: PulseClient.SourceFacts) -> String {
        if let sink = source.monitorOf { return "monitor of sink '\(sink)' (\(source.name))" }
        return source.description.isEmpty ? "source '\(source.name)'" : "source '\(source.name)' (\(source.description))"
    }

    static func sampleSpec(_ format: AudioFormat) -> pa_sample_spec {
        let type: pa_sample_format_t
        switch format.sampleType {
        case .s16: type = PA_SAMPLE_S16LE
        case .s32: type = PA_SAMPLE_S32LE
        case .f32: type = PA_SAMPLE_FLOAT32LE
        }
        return pa_sample_spec(format: type, rate: UInt32(clamping: format.sampleRate), channels: UInt8(clamping: format.channelCount))
    }

    /// PulseAudio's positions for FFmpeg's layouts, in FFmpeg's channel order; other
    /// layouts get the WAVE_FORMAT_EXTENSIBLE order for their channel count.
    static let channelMapNames: [String: String] = [
        "mono": "mono",
        "stereo": "front-left,front-right",
        "2.1": "front-left,front-right,lfe",
        "3.0": "front-left,front-right,front-center",
        "quad": "front-left,front-right,rear-left,rear-right",
        "5.0": "front-left,front-right,front-center,side-left,side-right",
        "5.1": "front-left,front-right,front-center,lfe,side-left,side-right",
        "5.1(side)": "front-left,front-right,front-center,lfe,side-left,side-right",
        "6.1": "front-left,front-right,front-center,lfe,rear-center,side-left,side-right",
        "7.1": "front-left,front-right,front-center,lfe,rear-left,rear-right,side-left,side-right",
    ]

    /// Creates the record stream on `context` (mainloop lock held) and connects it to `device`.
    func makeStream(_ context: OpaquePointer, device: String, monitoring input: UInt32? = nil) throws(SwiftRecordError) -> OpaquePointer {
        var spec = PulseAudioSource.sampleSpec(format)
        spec.rate = UInt32(clamping: captureRate)
        var map = pa_channel_map()
        let mapped = channelMap.flatMap { pa_channel_map_parse(&map, $0) }
            ?? pa_channel_map_init_extend(&map, UInt32(format.channelCount), PA_CHANNEL_MAP_WAVEEX)
        guard mapped != nil, map.channels == spec.channels else {
            throw SwiftRecordError(.unsupported, operation: "pulse", message: "PulseAudio has no channel map for \(format.channelLayout)")
        }
        guard let created = pa_stream_new(context, "swift-record", &spec, &map) else {
            throw SwiftRecordError(.io, operation: "pa_stream_new", message: "PulseAudio refused a \(format) record stream: \(PulseClient.text(pa_context_errno(context)))")
        }
        let userdata = Unmanaged.passUnretained(stream).toOpaque()
        pa_stream_set_state_callback(created, StreamContext.stateChanged, userdata)
        pa_stream_set_read_callback(created, StreamContext.readable, userdata)
        pa_stream_set_overflow_callback(created, StreamContext.overflowed, userdata)
        pa_stream_set_suspended_callback(created, StreamContext.suspendedOrResumed, userdata)
        pa_stream_set_moved_callback(created, StreamContext.moved, userdata)
        let fragment = pa_usec_to_bytes(pa_usec_t(PulseAudioSource.fragmentMilliseconds) * 1000, &spec)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max,
                                        minreq: UInt32.max, fragsize: UInt32(clamping: fragment))
        // A device asked for by name is that device: when it goes, the server ends the
        // stream rather than moving it to another source (the default's monitor follows
        // wherever the server moves it).
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                      | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                                      | (requestedDevice != nil || input != nil ? PA_STREAM_DONT_MOVE.rawValue : 0))
        if let input { pa_stream_set_monitor_stream(created, input) }
        guard pa_stream_connect_record(created, device, &attributes, flags) >= 0 else {
            let code = pa_context_errno(context)
            StreamContext.detach(created)
            pa_stream_unref(created)
            throw SwiftRecordError(.io, operation: "pa_stream_connect_record",
                                   message: "PulseAudio refused to record from '\(device)': \(PulseClient.text(code))")
        }
        return created
    }

    /// Waits until the stream is recording, or throws saying why it is not.
    func waitUntilReady(device: String, client: PulseClient) throws(SwiftRecordError) {
        let deadline = MonotonicClock.nanoseconds() + Int64(PulseAudioSource.startTimeout * 1e9)
        let state = stream.capture.wait(untilNanoseconds: deadline) { (s: inout StreamContext.State) -> StreamContext.State? in
            s.streamState == PA_STREAM_READY || s.streamState == PA_STREAM_FAILED || s.streamState == PA_STREAM_TERMINATED
                || s.interrupted ? s : nil
        }
        guard let state, state.streamState == PA_STREAM_READY else {
            if let state, state.interrupted, state.streamState != PA_STREAM_FAILED {
                throw SwiftRecordError(.cancelled, operation: "pulse", message: "the source was stopped while starting")
            }
            let why = state.map { PulseClient.text($0.errorCode) } ?? "no answer within \(PulseAudioSource.startTimeout) s"
            throw SwiftRecordError(.io, operation: "pa_stream_connect_record",
                                   message: "PulseAudio at \(client.serverDescription) did not open '\(device)' for recording: \(why)")
        }
        // The server may have placed the stream elsewhere (a device that went away meanwhile).
        let actual = lifecycle.withLock { (l: inout Lifecycle) -> String? in
            guard let created = l.stream else { return nil }
            return try? client.withMainloop { _ in pa_stream_get_device_name(created).map { String(cString: $0) } } ?? nil
        }
        if let actual {
            stream.capture.withLock { s in
                if s.deviceName != actual {
                    s.description = "source '\(actual)' (asked for '\(device)')"
                    s.deviceName = actual
                }
            }
        }
    }

    /// Unhooks and releases a stream (the mainloop lock taken here).
    static func release(_ created: OpaquePointer, on client: PulseClient) {
        _ = try? client.withMainloop { _ in
            StreamContext.detach(created)
            let state = pa_stream_get_state(created)
            if state == PA_STREAM_READY || state == PA_STREAM_CREATING { pa_stream_disconnect(created) }
            pa_stream_unref(created)
        }
    }
}
