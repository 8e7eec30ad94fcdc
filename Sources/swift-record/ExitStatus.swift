import ArgumentParser
import SwiftRecord

/// The one exit-status table of every subcommand (the DocC article "The swift-record command", and the man page; tested by
/// ExitStatusTests).
enum ExitStatus {
    /// 0: everything requested was done: every requested file complete and valid (`record`
    /// also after Ctrl-C, SIGTERM, SIGHUP or q + Enter, which finish the file); `verify`: the
    /// recording's frames run without gaps, repeats or reordering.
    static let success = ExitCode(0)
    /// 1: it could not be done, or not completely: a failure while recording, converting or
    /// repairing (what was recorded so far is kept, and the message says where), a device or
    /// server that is missing or went away, a full disk, a file that could not be saved;
    /// `verify`: the check found gaps, repeats or reordering.
    static let failed = ExitCode(1)
    /// 2: refused before anything was written, because of what was asked: an output that
    /// exists (without --overwrite), a path that is not a regular file or is the same file
    /// as another, an input that is not what it must be, settings the encoder or the
    /// container cannot take.
    static let refused = ExitCode(2)
    /// 64: usage, from argument-parser: an unknown option, a missing or malformed value.
    static let usage = ExitCode.validationFailure
    /// 130: `convert`, `trim` or `join` stopped by SIGINT, SIGTERM or SIGHUP before the end
    /// (`convert` with --allow-partial keeps the frames so far; `trim` and `join` leave
    /// nothing under the output's name).
    static let interrupted = ExitCode(130)

    /// The status for `error`, raised before anything was written: refused when the request
    /// is at fault, failed when the environment is (I/O, a device, a server).
    static func beforeWriting(_ error: any Error) -> ExitCode {
        guard let error = error as? SwiftRecordError else { return failed }
        switch error.kind {
        case .invalidArgument, .fileAlreadyExists, .unsupported, .invalidData, .pixelBufferMismatch: return refused
        case .cancelled: return interrupted
        default: return failed
        }
    }
}
