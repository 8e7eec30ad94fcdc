internal import CFFmpeg

extension PixelBuffer {
    /// A buffer over planar memory that something else owns (a shared-memory picture another
    /// process renders into), without copying it: the
    /// planes start `planeOffsets` bytes into the `length` bytes at `baseAddress`, their
    /// rows `bytesPerRow` apart. Every plane must lie inside those bytes; the initializer
    /// throws, naming the plane, when one does not.
    ///
    /// `release` runs exactly once, when neither this buffer nor an encoder holds the
    /// picture any longer; the memory must stay mapped until then. If the initializer
    /// throws, `release` is not called.
    public convenience init(wrappingPlanes baseAddress: UnsafeMutableRawPointer, length: Int, width: Int, height: Int,
                            pixelFormat: PixelFormat, planeOffsets: [Int], bytesPerRow: [Int],
                            release: @escaping @Sendable () -> Void) throws(SwiftRecordError) {
        let allocator = try PlaneAllocator(width: width, height: height, pixelFormat: pixelFormat)
        let planes = pixelFormat.planeCount
        guard planeOffsets.count == planes, bytesPerRow.count == planes, length > 0, length <= Int(Int32.max) else {
            throw SwiftRecordError(.invalidArgument, operation: "PixelBuffer(wrappingPlanes:)",
                                   message: "\(planeOffsets.count) offsets and \(bytesPerRow.count) strides over \(length) bytes; \(pixelFormat) has \(planes) planes")
        }
        for p in 0..<planes {
            let rows = pixelFormat.planeHeight(height, plane: p), minimum = pixelFormat.tightBytesPerRow(width: width, plane: p)
            let (span, overflow) = bytesPerRow[p].multipliedReportingOverflow(by: rows)
            guard bytesPerRow[p] >= minimum, bytesPerRow[p] <= Int(Int32.max), !overflow, planeOffsets[p] >= 0,
                  planeOffsets[p] <= length, span <= length - planeOffsets[p] else {
                throw SwiftRecordError(.invalidArgument, operation: "PixelBuffer(wrappingPlanes:)",
                                       message: "plane \(p) (\(bytesPerRow[p]) bytes per row from offset \(planeOffsets[p])) does not fit \(length) bytes; expected rows of at least \(minimum) bytes, \(rows) of them")
            }
        }
        let owner = try Frame()
        let frame = owner.pointer
        let action = Unmanaged.passRetained(ReleaseAction(release))
        guard let storage = av_buffer_create(baseAddress.assumingMemoryBound(to: UInt8.self), length, { opaque, _ in
            if let opaque { Unmanaged<ReleaseAction>.fromOpaque(opaque).takeRetainedValue().run() }
        }, action.toOpaque(), 0) else {
            action.release()
            throw SwiftRecordError(.ffmpeg, operation: "av_buffer_create", message: "out of memory")
        }
        sr_frame_set_buf(frame, 0, storage)
        for p in 0..<planes {
            sr_frame_data_array(frame)[p] = (baseAddress + planeOffsets[p]).assumingMemoryBound(to: UInt8.self)
            sr_frame_linesize_array(frame)[p] = Int32(bytesPerRow[p])
        }
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = pixelFormat.av.rawValue
        self.init(frame: owner, width: width, height: height, pixelFormat: pixelFormat, allocator: allocator, recycle: nil)
    }
}
