import Foundation
import SwiftRecord

/// Where the signals and terminal commands of a `record` run go, from its first line on
/// (so that no signal finds its default action while files are being created).
///
/// Before the recording runs, a stop (SIGINT, SIGTERM, SIGHUP) is remembered, and the
/// start-up step in progress is told to give up (`whileStarting`: a live output's connect
/// is cancelled at once instead of waiting out its timeout); start-up then removes what it
/// created and exits. Once the session is attached, a stop stops it, the file finished.
final class RecordingControl: Sendable {
    struct Actions: Sendable {
        var stop: @Sendable () -> Void
        var togglePause: @Sendable () -> Bool?
        var saveReplay: (@Sendable () -> Void)?
    }

    private struct State {
        var stopRequested: String?
        var actions: Actions?
        var abortStartUp: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    /// The stop that came before the recording started ("interrupted", "terminated", "hang-up"), if any.
    var stopRequested: String? { state.withLock { $0.actions == nil ? $0.stopRequested : nil } }

    /// What a stop during the coming start-up step does to cut it short (nil: nothing).
    func whileStarting(_ abort: (@Sendable () -> Void)?) {
        let stopped = state.withLock { s in
            s.abortStartUp = abort
            return s.stopRequested != nil
        }
        if stopped { abort?() }
    }

    /// Hands the signals to the running session. False, with nothing handed over, when a
    /// stop came first: start-up is then to be undone.
    func attach(_ actions: Actions) -> Bool {
        state.withLock { s in
            guard s.stopRequested == nil else { return false }
            s.actions = actions
            s.abortStartUp = nil
            return true
        }
    }

    /// SIGINT, SIGTERM, SIGHUP (`name` says which) or q + Enter.
    func stop(_ name: String) {
        let (actions, abort) = state.withLock { s in
            if s.stopRequested == nil || s.actions != nil { s.stopRequested = name }
            return (s.actions, s.abortStartUp)
        }
        if let actions {
            actions.stop()
            note("\nswift-record: \(name): finishing the file")
        } else {
            abort?()
            note("\nswift-record: \(name) while starting: undoing the start")
        }
    }

    /// SIGUSR1 or p + Enter: true if now paused, false if resumed, nil when there is
    /// nothing to pause (not recording yet, or not a live source).
    func togglePause() -> Bool? {
        state[\.actions]?.togglePause()
    }

    /// SIGUSR2 or s + Enter.
    func saveReplay() {
        guard let actions = state[\.actions] else {
            note("\nswift-record: not recording yet; nothing to save")
            return
        }
        guard let save = actions.saveReplay else {
            note("\nswift-record: there is no replay buffer to save (--replay-buffer)")
            return
        }
        save()
    }
}
