internal import CPulse
import Foundation
import SwiftRecord

/// One program's sound (`app:NAME`): the monitor of the sink it plays to, restricted to its
/// stream, followed while the program moves between sinks or pauses.
extension PulseAudioSource {
    /// Records `application`'s first playback stream, if it has one now: the monitor of
    /// its sink, restricted to that stream. Returns false when it is not playing.
    func attach(to application: String, client: PulseClient) throws(SwiftRecordError) -> Bool {
        guard let input = try client.sinkInputs().first(where: { $0.matches(application) }),
              let monitor = try client.monitorSource(ofSinkIndex: input.sink) else { return false }
        try lifecycle.withLock { (l: inout Lifecycle) throws(SwiftRecordError) in
            guard !l.stopped else { throw SwiftRecordError(.cancelled, operation: "pulse", message: "the source was stopped") }
            // The old stream first, its callbacks removed, so none of them reaches the state
            // set up for the new one.
            if let old = l.stream {
                l.stream = nil
                PulseAudioSource.release(old, on: client)
            }
            stream.capture.withLock { s in
                // A fresh stream: its latency is measured afresh, its first chunk follows a gap.
                s.streamState = PA_STREAM_UNCONNECTED
                s.wasReady = false
                s.detached = false
                s.pendingGap = s.framesDelivered > 0 || s.pendingGap
                s.framesDelivered = 0
                s.deviceName = monitor
                s.description = "the sound of '\(application)' alone (stream #\(input.index), through \(monitor))"
                s.programName = input.application ?? input.binary ?? s.programName
            }
            l.stream = try client.withMainloop { (context) throws(SwiftRecordError) in
                try makeStream(context, device: monitor, monitoring: input.index)
            }
        }
        try waitUntilReady(device: monitor, client: client)
        return true
    }

    /// Looks for `application`'s next stream every `followIntervalNanoseconds` while the source has
    /// none (not playing yet, or its stream went), until the source stops.
    func follow(_ application: String, client: PulseClient) {
        let thread = Thread { [weak self] in
            while let self {
                let deadline = MonotonicClock.nanoseconds() + PulseAudioSource.followIntervalNanoseconds
                let stopping = self.stream.capture.wait(untilNanoseconds: deadline) { $0.stopping ? true : nil } ?? false
                if stopping || self.lifecycle.withLock({ $0.stopped }) { return }
                let attached = self.stream.capture.withLock { $0.wasReady && !$0.detached }
                if !attached { _ = try? self.attach(to: application, client: client) }
            }
        }
        thread.name = "swift-record.pulse-follow"
        thread.start()
    }

    /// The programs playing now on the server, as `app:` names (`application.name`, and
    /// the process id and sink input in the description).
    public static func listApplications(server: String? = nil) throws -> [AudioDeviceInfo] {
        let client = try PulseClient(server: server, timeout: startTimeout)
        defer { client.close() }
        var seen = Set<String>()
        return try client.sinkInputs().compactMap { input in
            guard let name = input.application ?? input.binary ?? input.processID, seen.insert(name).inserted else { return nil }
            let details = [input.processID.map { "pid \($0)" }, input.mediaName.map { "'\($0)'" }].compactMap { $0 }
            return AudioDeviceInfo(name: name, description: "playing now" + (details.isEmpty ? "" : " (" + details.joined(separator: ", ") + ")"),
                                   isMonitor: false, isDefault: false)
        }
    }
}

extension PulseAudioSource {
    /// How many playback streams (sink inputs) process `processID` has on the server now,
    /// by their `application.process.id`: what a recording of the desktop's sound that
    /// must leave this process out checks, since a sink's monitor mixes every stream.
    public static func playbackStreamCount(ofProcess processID: Int32, server: String? = nil) throws(SwiftRecordError) -> Int {
        let client = try PulseClient(server: server, timeout: startTimeout)
        defer { client.close() }
        return try client.sinkInputs().filter { $0.processID == String(processID) }.count
    }
}
