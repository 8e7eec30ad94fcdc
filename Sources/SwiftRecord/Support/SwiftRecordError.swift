internal import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// The error every swift-record API throws: what kind of failure, which operation
/// failed, FFmpeg's code and message when the failure came from FFmpeg.
///
/// The counterpart of the `NSError` in `AVAssetWriter.error` on Apple platforms.
public struct SwiftRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; match on it rather than on the message.
    public enum Kind: String, Sendable, Equatable {
        /// A call made in the wrong writer or input state (appending before `startWriting()`, …).
        case invalidState
        /// A value outside what the API accepts (a size of 0, a timescale of 0, …).
        case invalidArgument
        /// A presentation time that does not increase.
        case nonIncreasingTimestamp
        /// A pixel buffer whose size or pixel format is not the one expected.
        case pixelBufferMismatch
        /// A codec, container or pixel format this build of FFmpeg cannot handle.
        case unsupported
        /// A pool that has handed out all the buffers it may.
        case poolExhausted
        /// Nothing is ready yet: a capture source with no new picture due (another process
        /// that has not sent one); ask again.
        case notReady
        /// A file exists where a new one was to be written, and replacing it was not asked
        /// for (`AVError.fileAlreadyExists`).
        case fileAlreadyExists
        /// Reading or writing a file failed (the system error is in `message`).
        case io
        /// Input data that is malformed or inconsistent with what was declared.
        case invalidData
        /// An FFmpeg call failed; `ffmpegCode` and `message` say how.
        case ffmpeg
        /// The operation was cancelled.
        case cancelled
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The operation that failed, e.g. `"avcodec_open2(libx264)"` or `"append"`.
    public let operation: String
    /// FFmpeg's negative error code, when the failure came from FFmpeg.
    public let ffmpegCode: Int32?
    /// A sentence saying what was wrong and, where it helps, what was expected.
    public let message: String

    /// True when a capture source's grab brought no picture but may bring one when asked
    /// again: every buffer still held (`.poolExhausted`), or none due yet (`.notReady`).
    public var isNoPictureThisTime: Bool { kind == .poolExhausted || kind == .notReady }

    /// True when FFmpeg gave up because our interrupt callback asked it to (AVERROR_EXIT):
    /// a stop or a deadline of ours, not a fault of the server or the file.
    var isInterruption: Bool { ffmpegCode == sr_error_exit() }

    /// An error of `kind` from `operation`, saying `message` (and FFmpeg's `ffmpegCode`, if any).
    public init(_ kind: Kind, operation: String, message: String, ffmpegCode: Int32? = nil) {
        self.kind = kind
        self.operation = operation
        self.message = message
        self.ffmpegCode = ffmpegCode
    }

    /// `operation: message`, and FFmpeg's own text for `ffmpegCode` (never the bare number)
    /// when the message does not already say it.
    public var description: String {
        guard let code = ffmpegCode else { return "\(operation): \(message)" }
        let text = ffmpegErrorString(code)
        if message.contains(text) {
            return "\(operation): \(message) (FFmpeg error \(code))"
        }
        return "\(operation): \(message) (FFmpeg: \(text), error \(code))"
    }
}

/// FFmpeg's text for an error code (the `av_err2str` macro, which Swift cannot import).
func ffmpegErrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    if av_strerror(code, &buffer, buffer.count) < 0 {
        return "unknown error \(code)"
    }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The one place FFmpeg return codes are checked: a negative code becomes a thrown
/// `SwiftRecordError` naming the operation (and, with `hint`, what to look at); anything
/// else is returned. Write errors (disk full, I/O error, broken pipe) are of kind `.io`.
@discardableResult
func check(_ code: Int32, _ operation: @autoclosure () -> String, kind: SwiftRecordError.Kind = .ffmpeg,
           hint: @autoclosure () -> String? = nil) throws(SwiftRecordError) -> Int32 {
    if code < 0 {
        throw ffmpegError(code, operation(), kind: kind, hint: hint())
    }
    return code
}

/// The error for FFmpeg's negative `code`: `.io` for the system's write errors whatever
/// `kind` says, so a full disk reads as one wherever it shows.
func ffmpegError(_ code: Int32, _ operation: String, kind: SwiftRecordError.Kind = .ffmpeg, hint: String? = nil) -> SwiftRecordError {
    let io = [ENOSPC, EIO, EFBIG, EDQUOT, EPIPE].contains { code == sr_error_from_errno($0) }
    let message = ffmpegErrorString(code) + (hint.map { "; " + $0 } ?? "")
    return SwiftRecordError(io ? .io : kind, operation: operation, message: message, ffmpegCode: code)
}

/// Result of handing data to FFmpeg's send/receive APIs: "would block" is a value, not an error.
enum CodecStep: Equatable {
    /// Data produced or consumed.
    case ok
    /// Not now: the other side must be serviced first (EAGAIN).
    case again
    /// No more data will come (EOF).
    case endOfStream
}

func codecStep(_ code: Int32, _ operation: @autoclosure () -> String) throws(SwiftRecordError) -> CodecStep {
    if code >= 0 { return .ok }
    if code == sr_error_again() { return .again }
    if code == sr_error_eof() { return .endOfStream }
    throw ffmpegError(code, operation())
}


