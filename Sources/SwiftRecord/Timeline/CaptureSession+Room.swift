import Foundation

extension CaptureSession {
    /// Where the wait for room in the encoder's queue stands.
    enum RoomWatch {
        /// None running: the next held frame starts one.
        case idle
        /// The input's queue wakes the pacer at its next free slot.
        case watching
        /// The input takes nothing more (finished, failed or cancelled): no more waits.
        case ended
    }

    /// Appends waiting frames, oldest first, while the encoder's queue has room.
    func appendPending(live: inout LiveState, origin: MediaTime) throws {
        while let next = live.pending.first, adaptor.assetWriterInput.isReadyForMoreMediaData {
            guard try adaptor.appendIfReady(next.buffer, withPresentationTime: next.frame.presentationTime) else { return }
            live.pending.removeFirst()
            written(next, live: &live, origin: origin)
        }
    }

    /// While frames wait for room in the encoder's queue: the queue's next free slot
    /// wakes the capture thread's pacer itself (on the writer's thread). Nothing runs while
    /// frames go straight in (no polling between ticks), and once the input will take
    /// nothing more, no further watch starts.
    func watchForRoom() {
        let start = state.withLock { s -> Bool in
            guard case .idle = s.roomWatch else { return false }
            s.roomWatch = .watching
            return true
        }
        guard start else { return }
        adaptor.assetWriterInput.whenReadyForMoreMediaData { [weak self] ready in
            guard let self else { return }
            self.state.withLock { $0.roomWatch = ready ? .idle : .ended }
            self.pacer.wake()
        }
    }
}
