internal import CFFmpeg

/// The one owner of an `AVFrame`: allocated in `init`, freed in `deinit`, and nowhere else
/// (`scripts/check-c-owners.py` fails `make test` on an `av_frame_alloc` or `av_frame_free`
/// outside this file). What the frame references (its planes' buffers) is its holder's
/// business: `unref()` lets them go and keeps the frame for reuse.
///
/// Not `Sendable`: its holder says which thread uses it (a pipeline's, a reader's, a
/// pixel buffer's lock).
final class Frame {
    /// The frame, valid as long as this object lives: lent to FFmpeg calls, never freed or
    /// kept beyond it.
    let pointer: UnsafeMutablePointer<AVFrame>

    /// A blank frame (`av_frame_alloc`).
    init() throws(SwiftRecordError) {
        guard let frame = av_frame_alloc() else {
            throw SwiftRecordError(.ffmpeg, operation: "av_frame_alloc", message: "out of memory")
        }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// Lets go of what the frame references and resets its fields (`av_frame_unref`).
    func unref() { av_frame_unref(pointer) }

    /// Makes this frame show `other`'s planes and picture properties without a reference
    /// of its own (`sr_frame_borrow`, no copy): valid while `other`'s planes are, until
    /// `endBorrow()`. An encoder this frame is sent to takes its own reference.
    func borrow(_ other: Frame) { sr_frame_borrow(pointer, other.pointer) }

    /// Forgets the borrowed planes (never unreferenced here) and resets the frame for the
    /// next borrow.
    func endBorrow() { sr_frame_end_borrow(pointer) }

    /// Stamps a picture for its encoder: shown at `ticks` (the encoder's time base), and a
    /// key picture when `key`, else of the type the encoder chooses.
    func stamp(ticks: Int64, key: Bool) {
        pointer.pointee.pts = ticks
        pointer.pointee.pict_type = key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
    }
}
