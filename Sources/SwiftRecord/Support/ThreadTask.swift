import Foundation

/// Blocking work on a thread of its own, awaited from async code: the library's one bridge
/// from a loop that blocks (the capture thread, a sound source's thread, a converter) to Swift
/// concurrency. `abandon(with:)` resumes the waiter without the thread — a stop that gives up
/// on a thread stuck in a call that never returns (a frozen X server); the thread's own end
/// is then ignored.
package final class ThreadTask: Sendable {
    private let waiter = Locked<CheckedContinuation<Void, any Error>?>(nil)

    package init() {}

    /// Runs `body` on a new thread named `name`, returning (or throwing) when it does, or when
    /// `abandon(with:)` is called first.
    package func run(name: String, _ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            waiter.withLock { $0 = c }
            let thread = Thread { [self] in
                do { try body(); end(.success(())) } catch { end(.failure(error)) }
            }
            thread.name = name
            thread.qualityOfService = .userInteractive
            thread.start()
        }
    }

    /// Runs `body` on a thread of its own and returns how it ended.
    package static func run(name: String, _ body: @escaping @Sendable () throws -> Void) async -> Result<Void, any Error> {
        do {
            try await ThreadTask().run(name: name, body)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Resumes the waiter now with `error`, if it still waits.
    package func abandon(with error: any Error) { end(.failure(error)) }

    private func end(_ result: Result<Void, any Error>) {
        let c = waiter.withLock { w in
            defer { w = nil }
            return w
        }
        c?.resume(with: result)
    }
}
