internal import CFFmpeg

extension PixelBuffer {
    /// A picture of `pool`'s size and format, black (limited-range black for YUV: luma 16,
    /// chroma 128): what a track shows for a source that has given no picture yet.
    static func black(from pool: PixelBufferPool) throws(SwiftRecordError) -> PixelBuffer {
        let picture = try pool.makePixelBuffer()
        let format = picture.pixelFormat.av
        let (width, height) = (Int32(picture.width), Int32(picture.height))
        let status = picture.withWritableFrame { frame -> Int32 in
            var planes: [UnsafeMutablePointer<UInt8>?] = (0..<4).map { sr_frame_data(frame, Int32($0)) }
            var strides: [Int] = (0..<4).map { Int(sr_frame_linesize(frame, Int32($0))) }
            return av_image_fill_black(&planes, &strides, format, AVCOL_RANGE_MPEG, width, height)
        }
        guard status >= 0 else {
            throw SwiftRecordError(.io, operation: "PixelBuffer.black",
                                   message: "cannot paint a \(picture.width)x\(picture.height) \(picture.pixelFormat) picture black (\(status))")
        }
        return picture
    }
}
