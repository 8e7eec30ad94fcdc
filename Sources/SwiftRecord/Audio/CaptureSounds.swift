import Foundation

extension AudioCaptureSource {
    /// The source's sound as an async sequence: `for try await chunk in source.sounds()`.
    ///
    /// Iterating starts the source and stops it when the loop ends (a `break`, the task's
    /// cancellation, the source's end or an error). A live source is read on a thread of its
    /// own that never waits for the consumer: at most `bufferingNewest` chunks wait for it,
    /// the older ones dropped and counted (``CaptureSounds/droppedCount``; the next chunk
    /// kept says `followsGap` only as the source said it). A cancelled task's loop ends at
    /// once, the source's read within its next chunk (`interrupt()`). An offline source (a
    /// WAV file, the unpaced tone) gives its next chunk when asked: nothing is dropped.
    public func sounds(bufferingNewest: Int = 64) -> CaptureSounds {
        CaptureSounds(source: self, depth: max(1, bufferingNewest))
    }
}

/// The chunks of an audio capture source as an `AsyncSequence` (see
/// ``AudioCaptureSource/sounds(bufferingNewest:)``). Iterate it once.
public struct CaptureSounds: AsyncSequence, Sendable {
    public typealias Element = CapturedAudio

    let source: any AudioCaptureSource
    let depth: Int
    private let drops = Locked(0)

    init(source: any AudioCaptureSource, depth: Int) {
        (self.source, self.depth) = (source, depth)
    }

    /// Chunks dropped so far because the consumer was `bufferingNewest` chunks behind.
    public var droppedCount: Int { drops.withLock { $0 } }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<CapturedAudio, any Error>.AsyncIterator

        public mutating func next() async throws -> CapturedAudio? { try await base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: (source.isLive ? live() : offline()).makeAsyncIterator())
    }

    private func offline() -> AsyncThrowingStream<CapturedAudio, any Error> {
        let (source, started) = (source, Locked(false))
        return AsyncThrowingStream {
            try started.withLock { (s: inout Bool) throws in
                if !s { try source.start(); s = true }
            }
            guard !Task.isCancelled, let chunk = try source.nextChunk() else {
                source.stop()
                return nil
            }
            return chunk
        }
    }

    private func live() -> AsyncThrowingStream<CapturedAudio, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: CapturedAudio.self, bufferingPolicy: .bufferingNewest(depth))
        let (source, drops) = (source, drops)
        continuation.onTermination = { _ in source.interrupt() }
        let thread = Thread {
            do {
                try source.start()
                defer { source.stop() }
                while let chunk = try source.nextChunk() {
                    switch continuation.yield(chunk) {
                    case .dropped: drops.withLock { $0 += 1 }
                    case .terminated: return
                    default: break
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = "swift-record.sounds"
        thread.qualityOfService = .userInteractive
        thread.start()
        return stream
    }
}
