import Foundation

/// The live output's thread: connect, send what the queue holds, reconnect after a lost
/// connection, close. Only this thread touches the connection (and its FFmpeg objects).
extension LiveOutput {
    /// Starts the output's thread with the writer's streams; returns once the first
    /// connection is made, or throws why it could not be (within `connectTimeout`).
    func start(streams all: [StreamParameters], waitsForRoom: Bool = false) throws(SwiftRecordError) {
        // Every video track and the first audio track (an RTMP server takes one audio track).
        let firstAudio = all.firstIndex { !$0.isVideo }
        let kept = all.indices.filter { all[$0].isVideo || $0 == firstAudio }
        let streams = kept.map { all[$0] }
        state.withLockNotifying { s in
            s.carried = Dictionary(uniqueKeysWithValues: kept.enumerated().map { ($1, $0) })
            s.threadRunning = true
            s.waitsForRoom = waitsForRoom
            s.status = .connecting
            s.queue.limitMicroseconds = s.settings.maximumQueueDuration.convertScale(1_000_000).value
        }
        let thread = Thread { [self] in run(streams) }
        thread.name = "swift-record.live"
        thread.start()
        let outcome = state.wait { s -> Result<Void, SwiftRecordError>? in
            switch s.status {
            case .streaming: return .success(())
            case .failed, .completed:
                return .failure(s.error ?? SwiftRecordError(.invalidState, operation: "connect", message: "the output closed"))
            default: return nil
            }
        }
        try outcome?.get()
    }

    /// FFmpeg's interrupt callback: true once the blocking call's deadline, the finish
    /// deadline or a cancel has come.
    func shouldInterrupt() -> Bool {
        let now = MonotonicClock.nanoseconds()
        return state.withLock { s in
            s.cancelRequested || (s.ioDeadline.map { now >= $0 } ?? false) || (s.finishDeadline.map { now >= $0 } ?? false)
        }
    }

    private enum Ending {
        case finished
        case cancelled
        case lost(SwiftRecordError)
    }

    private func run(_ streams: [StreamParameters]) {
        var connection: LiveConnection?
        switch connect(streams) {
        case .success(let c): connection = c
        case .failure(let error):
            end(.failed, error)
            return
        }
        markStreaming(reconnected: false)
        var delay = state.withLock { $0.settings.reconnectDelay.seconds }
        var lostAt: Int64 = 0
        while true {
            if let c = connection {
                switch send(c) {
                case .finished:
                    let unconfirmed = c.unconfirmed()
                    do {
                        try c.finish()
                        end(.completed, nil)
                    } catch {
                        state.withLock { s in s.statistics.countUnconfirmed(unconfirmed) }
                        end(.failed, error)
                    }
                    return
                case .cancelled:
                    abandon(c)
                    end(.failed, SwiftRecordError(.cancelled, operation: "stream \(displayName)", message: "the writer was cancelled"))
                    return
                case .lost(let error):
                    let unconfirmed = c.unconfirmed()
                    abandon(c)
                    connection = nil
                    lostAt = MonotonicClock.nanoseconds()
                    let goOn = state.withLockNotifying { s in
                        s.statistics.outages += 1
                        s.statistics.countUnconfirmed(unconfirmed)
                        let drops = s.queue.clear()
                        s.statistics.videoFramesLost += drops.videoFrames
                        s.statistics.audioPacketsLost += drops.audioPackets
                        s.statistics.queuedMilliseconds = 0
                        s.status = .reconnecting
                        return s.settings.reconnects && kind != .hls && s.finishDeadline == nil && !s.cancelRequested
                    }
                    if !goOn {
                        end(.failed, error)
                        return
                    }
                    delay = state.withLock { $0.settings.reconnectDelay.seconds }
                }
            } else {
                // OBS's back-off: wait, try, wait 1.5 times longer (at most 30 s), with jitter
                // so that many recorders do not come back at the same instant.
                if pause(seconds: delay * Double.random(in: 1.0...1.25)) {
                    addOutage(since: lostAt)
                    end(.failed, SwiftRecordError(.io, operation: "stream \(displayName)",
                                                  message: "the connection was lost and not back before the recording ended"))
                    return
                }
                switch connect(streams) {
                case .success(let c):
                    connection = c
                    addOutage(since: lostAt)
                    markStreaming(reconnected: true)
                case .failure:
                    state.withLock { s in s.statistics.failedReconnectAttempts += 1 }
                    delay = min(delay * 1.5, 30)
                }
            }
        }
    }

    private func connect(_ streams: [StreamParameters]) -> Result<LiveConnection, SwiftRecordError> {
        let settings = state.withLock { s in
            s.ioDeadline = MonotonicClock.nanoseconds() + Int64(s.settings.connectTimeout.seconds * 1e9)
            return s.settings
        }
        defer { state.withLock { s in s.ioDeadline = nil } }
        do throws(SwiftRecordError) {
            return .success(try LiveConnection(output: self, streams: streams, settings: settings))
        } catch {
            return .failure(error)
        }
    }

    private func markStreaming(reconnected: Bool) {
        state.withLockNotifying { s in
            if s.status == .connecting || s.status == .reconnecting { s.status = .streaming }
            if reconnected { s.statistics.reconnects += 1 }
        }
    }

    private func addOutage(since start: Int64) {
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        state.withLock { s in s.statistics.outageSeconds += seconds }
    }

    /// Sends queued packets until finish (queue empty), cancel, or a failed write.
    private func send(_ connection: LiveConnection) -> Ending {
        while true {
            enum Next { case packet(EncodedPacket), finished, cancelled }
            // Notifying: an offline writer's `offer` may wait for the room a pop makes.
            let next = state.wait(notifying: true) { s -> Next? in
                if s.cancelRequested { return .cancelled }
                if let packet = s.queue.pop() {
                    s.statistics.queuedMilliseconds = Int(s.queue.queuedMicroseconds / 1000)
                    s.ioDeadline = MonotonicClock.nanoseconds() + Int64(writeSeconds(s.settings) * 1e9)
                    return .packet(packet)
                }
                return s.finishRequested ? .finished : nil
            }
            let packet: EncodedPacket
            switch next {
            case .packet(let p)?: packet = p
            case .finished?: return .finished
            case .cancelled?, nil: return .cancelled
            }
            do throws(SwiftRecordError) {
                try connection.write(packet)
            } catch {
                let finishing = state.withLock { s in
                    s.ioDeadline = nil
                    return s.finishDeadline != nil
                }
                return .lost(finishing && error.isInterruption
                    ? SwiftRecordError(.io, operation: "stream \(displayName)", message: "the network stalled; what was still queued was abandoned when the recording ended")
                    : error)
            }
            state.withLock { s in
                s.ioDeadline = nil
                s.statistics.packetsSent += 1
                s.statistics.bytesSent += Int64(packet.data.count)
                if packet.isVideo { s.statistics.videoFramesSent += 1 }
            }
        }
    }

    /// How long one packet's write may block: the connect timeout; for SRT at most
    /// `LiveConnection.srtWriteSeconds` (its send buffer is small, see `LiveConnection`).
    private func writeSeconds(_ settings: Settings) -> Double {
        kind == .srt ? min(settings.connectTimeout.seconds, LiveConnection.srtWriteSeconds) : settings.connectTimeout.seconds
    }

    /// Closes a lost or cancelled connection at once (anything it would still send is cut short).
    private func abandon(_ connection: LiveConnection) {
        state.withLock { s in s.ioDeadline = MonotonicClock.nanoseconds() }
        if kind == .srt {
            // libsrt closes the last socket of the process only once its linger (1 s, see
            // LiveConnection) has run out, then a second more (2.0 s measured with the
            // listener gone): that would hold back the reconnect, so the close is done on a
            // thread of its own, the buffered bytes thrown away first (under the interrupt).
            connection.discardBuffered()
            // Handed over: this thread does not touch the connection again (the caller drops it).
            nonisolated(unsafe) let closing = connection
            Thread.detachNewThread { closing.abandon() }
        } else {
            connection.abandon()
        }
        state.withLock { s in s.ioDeadline = nil }
    }

    /// Waits `seconds`; true when finish or cancel came first.
    private func pause(seconds: Double) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
        let stopped = state.wait(untilNanoseconds: deadline) { s -> Bool? in
            s.finishRequested || s.cancelRequested ? true : nil
        }
        return stopped ?? false
    }

    private func end(_ status: Status, _ error: SwiftRecordError?) {
        state.withLockNotifying { s in
            s.status = status
            if let error, s.error == nil { s.error = error }
            let drops = s.queue.clear()
            s.statistics.videoFramesLost += drops.videoFrames
            s.statistics.audioPacketsLost += drops.audioPackets
            s.statistics.queuedMilliseconds = 0
            s.threadDone = true
        }
    }
}
