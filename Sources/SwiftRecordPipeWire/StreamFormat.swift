package import CPipeWire
import SwiftRecord

/// The pixel layouts a compositor sends in shared memory (4 bytes a pixel), and those a
/// camera sends (YUY2, NV12, I420).
package enum StreamPixelFormat: Sendable, Equatable {
    case bgrx, bgra, rgbx, rgba
    case yuy2, nv12, i420
    /// A camera's MJPG: every buffer one JPEG picture, decoded through libavcodec.
    case mjpg

    package init?(_ format: spa_video_format) {
        switch format {
        case SPA_VIDEO_FORMAT_BGRx: self = .bgrx
        case SPA_VIDEO_FORMAT_BGRA: self = .bgra
        case SPA_VIDEO_FORMAT_RGBx: self = .rgbx
        case SPA_VIDEO_FORMAT_RGBA: self = .rgba
        case SPA_VIDEO_FORMAT_YUY2: self = .yuy2
        case SPA_VIDEO_FORMAT_NV12: self = .nv12
        case SPA_VIDEO_FORMAT_I420: self = .i420
        default: return nil
        }
    }

    /// 4 bytes a pixel, red, green, blue and alpha or padding: what a screen cast sends.
    package var isRGB: Bool { [.bgrx, .bgra, .rgbx, .rgba].contains(self) }

    /// Red and blue change places on the way to BGRA.
    package var swapsRedAndBlue: Bool { self == .rgbx || self == .rgba }

    /// The same layout in SwiftRecord's terms.
    package var pixelFormat: PixelFormat {
        switch self {
        case .bgrx: return .bgr0
        case .bgra: return .bgra
        case .rgbx, .rgba: return .rgba
        case .yuy2: return .yuyv422
        case .nv12: return .nv12
        case .i420, .mjpg: return .yuv420p   // MJPG: what its pictures are decoded into
        }
    }
}

/// The format PipeWire and the producer (a compositor, a camera, a program) agreed on.
package struct StreamFormat: Sendable, Equatable {
    package var width: Int
    package var height: Int
    package var pixelFormat: StreamPixelFormat
    /// The rate the producer said, when it said one.
    package var frameRate: Rational? = nil

    package init(width: Int, height: Int, pixelFormat: StreamPixelFormat, frameRate: Rational? = nil) {
        (self.width, self.height, self.pixelFormat, self.frameRate) = (width, height, pixelFormat, frameRate)
    }
}

/// What a stream offers to take.
package enum StreamOffer: Sendable, Equatable {
    /// A screen cast: 4-byte RGB layouts of any size.
    case screen
    /// A camera: YUY2, NV12 or I420 (preferred: no decoding), or MJPG; this size and rate preferred.
    case camera(width: Int, height: Int, fps: Int)
    /// Any picture producer (a renderer, GStreamer's `pipewiresink`, a virtual camera): the
    /// camera's formats and the screen's 4-byte RGB ones; this size and rate preferred.
    case producer(width: Int, height: Int, fps: Int)
}
