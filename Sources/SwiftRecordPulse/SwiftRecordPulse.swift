import SwiftRecord

/// PulseAudio capture for swift-record: registers the `pulse` audio source.
public enum SwiftRecordPulse {
    /// Adds `pulse` and `app` (one program's sound) to `registry` with their device listers (the command line does this at
    /// start-up): made from the options' device (nil: the default sink's monitor), rate
    /// and layout, recording f32 samples, its device checked on the server at once (so a
    /// missing device or server is an error before anything is recorded).
    public static func register(in registry: AudioSourceRegistry = .shared) {
        registry.register(name: PulseAudioSource.name,
                          summary: "a PulseAudio source or monitor (default: the default sink's monitor, what you hear)",
                          listDevices: { try PulseAudioSource.listDevices() }) { options in
            let source = try PulseAudioSource(options: options)
            try source.checkDevice()
            return source
        }
        registry.register(name: "app",
                          summary: "one program's sound through PulseAudio (app:NAME, its application name or binary, or app:PID)",
                          listDevices: { try PulseAudioSource.listApplications() }) { options in
            guard let application = options.device, !application.isEmpty else {
                throw SwiftRecordError(.invalidArgument, operation: "--audio",
                                       message: "app needs a program: --audio app:NAME (its application name or binary) or app:PID (see --list-audio-devices)")
            }
            let source = try PulseAudioSource(options: options, application: application)
            try source.checkServer()
            return source
        }
    }
}

extension PulseAudioSource {
    /// The sources of the server (`server`, or `$PULSE_SERVER` / the per-user socket),
    /// monitors included; `isDefault` marks the default source and the default sink's
    /// monitor. Throws naming the server when none is reachable.
    public static func listDevices(server: String? = nil) throws -> [AudioDeviceInfo] {
        let client = try PulseClient(server: server, timeout: startTimeout)
        defer { client.close() }
        let info = try client.serverInfo()
        return try client.sources().map { source in
            AudioDeviceInfo(name: source.name,
                            description: source.description.isEmpty ? describe(source) : source.description,
                            isMonitor: source.monitorOf != nil,
                            isDefault: source.name == info.defaultSource
                                || (source.monitorOf != nil && source.monitorOf == info.defaultSink))
        }
    }

    /// True when a PulseAudio server answers within `timeout` seconds (never starts one):
    /// for choosing `--audio default`.
    public static func isServerReachable(server: String? = nil, timeout: Double = 1) -> Bool {
        guard let client = try? PulseClient(server: server, timeout: timeout) else { return false }
        client.close()
        return true
    }
}
