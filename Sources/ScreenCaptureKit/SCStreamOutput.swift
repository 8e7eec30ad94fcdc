import CoreMedia
import Foundation
import SwiftRecord

/// What a stream output receives.
public enum SCStreamOutputType: Int, Sendable {
    case screen, audio, microphone
}

/// A picture's state, the `SCStreamFrameInfo.status` attachment (as its raw `Int`).
public enum SCFrameStatus: Int, Sendable {
    /// A new picture.
    case complete
    /// Nothing changed since the last picture (a still screen): the same pixels.
    case idle
    case blank, suspended, started, stopped
}

/// The keys of a picture's attachments (`CMSampleBufferGetSampleAttachmentsArray`).
public struct SCStreamFrameInfo: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `SCFrameStatus.rawValue` (`Int`).
    public static let status = SCStreamFrameInfo(rawValue: "SCStreamUpdateFrameStatus")
    /// `[CGRect]`: the changed parts, in the picture's pixels (X11's damage rectangles).
    public static let dirtyRects = SCStreamFrameInfo(rawValue: "SCStreamUpdateFrameDirtyRects")
    /// `CGRect`: where the content lies in the picture.
    public static let contentRect = SCStreamFrameInfo(rawValue: "SCStreamUpdateFrameContentRect")
    /// `UInt64`: when the picture was taken, monotonic nanoseconds.
    public static let displayTime = SCStreamFrameInfo(rawValue: "SCStreamUpdateFrameDisplayTime")
    /// `Double`: 1 (X11 pixels are points).
    public static let scaleFactor = SCStreamFrameInfo(rawValue: "SCStreamUpdateFrameScaleFactor")
}

/// The attachments of a stream's picture: one `[SCStreamFrameInfo: Any]` dictionary (cast as
/// Apple's code casts the `CFArray`: `as? [[SCStreamFrameInfo: Any]]`); nil for a sample
/// buffer that has none (sound, or not from a stream).
public func CMSampleBufferGetSampleAttachmentsArray(_ sbuf: CMSampleBuffer, createIfNecessary: Bool) -> [Any]? {
    guard case .video(let sample) = sbuf, let info = sample.captureInfo else { return createIfNecessary ? [[SCStreamFrameInfo: Any]()] : nil }
    let r = info.contentRect
    let attachments: [SCStreamFrameInfo: Any] = [
        .status: (info.isUnchanged ? SCFrameStatus.idle : .complete).rawValue,
        .dirtyRects: (info.dirtyRects ?? [PixelRegion(x: 0, y: 0, width: r.width, height: r.height)]).map {
            CGRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height)
        },
        .contentRect: CGRect(x: r.x, y: r.y, width: r.width, height: r.height),
        .displayTime: UInt64(clamping: info.captureTime.convertScale(1_000_000_000, rounding: .down).value),
        .scaleFactor: 1.0,
    ]
    return [attachments]
}

/// Receives a stream's sample buffers, on the queue given with it.
public protocol SCStreamOutput: AnyObject {
    func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType)
}

/// Hears of a stream that stopped by itself (the display server went, a grab failed).
public protocol SCStreamDelegate: AnyObject {
    func stream(_ stream: SCStream, didStopWithError error: any Error)
}

extension SCStreamDelegate {
    public func stream(_ stream: SCStream, didStopWithError error: any Error) {}
}
