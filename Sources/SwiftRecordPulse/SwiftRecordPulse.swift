import SwiftRecord

/// PulseAudio capture for swift-record: registers the `pulse` audio source.
public enum SwiftRecordPulse {
    /// Adds `pulse` to `registry` with its device lister (the command line does this at
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
