// The wire protocol, the socket, the ring and the sender's core (BroadcastError with them):
// a module of their own, without FFmpeg or Foundation, for libSwiftRecordSender.so.
@_exported import SwiftRecordBroadcastWire
import SwiftRecord

/// Another process's pictures and sound for swift-record: registers the `broadcast` audio
/// source (`--audio broadcast:app`, `--audio broadcast:mic`), which reads the connection a
/// `BroadcastSource` (`--source broadcast:NAME`) opened.
public enum SwiftRecordBroadcast {
    public static func register(in registry: AudioSourceRegistry = .shared) {
        registry.register(name: BroadcastAudioSource.name,
                          summary: "a broadcast sender's app or microphone sound (broadcast:app, broadcast:mic; with --source broadcast:NAME)") { options in
            try BroadcastAudioSource(device: options.device)
        }
    }
}
