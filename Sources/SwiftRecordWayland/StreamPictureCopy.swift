internal import CWayland
import SwiftRecord

/// Copies a PipeWire buffer's picture into a BGRA pixel buffer: the stride the compositor
/// chose, its crop region (`SPA_META_VideoCrop`) when it sends one, red and blue swapped
/// for RGBx/RGBA. A picture smaller than the buffer (a crop, a monitor made smaller) lands
/// in its top-left corner on black; a larger one is cut to it.
enum StreamPictureCopy {
    static func copy(_ held: UnsafeMutablePointer<pw_buffer>, format: StreamFormat, into picture: PixelBuffer) {
        guard let buffer = held.pointee.buffer, let data = buffer.pointee.datas, let base = data.pointee.data,
              let chunk = data.pointee.chunk else { return }
        let maxSize = Int(data.pointee.maxsize)
        let offset = Int(chunk.pointee.offset) % max(maxSize, 1)
        let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : format.width * 4
        var left = 0, top = 0, width = format.width, height = format.height
        if let crop = spa_buffer_find_meta_data(buffer, SPA_META_VideoCrop.rawValue, MemoryLayout<spa_meta_region>.size)?
            .assumingMemoryBound(to: spa_meta_region.self).pointee.region,
           crop.size.width > 0, crop.size.height > 0 {
            left = max(0, Int(crop.position.x))
            top = max(0, Int(crop.position.y))
            width = min(Int(crop.size.width), format.width - left)
            height = min(Int(crop.size.height), format.height - top)
        }
        // Rows that lie inside the mapped memory only, whatever the chunk claims.
        let available = maxSize - offset
        picture.withWriteAccess { planes in
            let plane = planes[0]
            let rows = min(height, plane.height)
            let rowBytes = min(width, picture.width) * 4
            let whole = rows == plane.height && rowBytes == plane.rowLength
            if !whole {
                for y in 0..<plane.height { memset(plane.baseAddress + y * plane.bytesPerRow, 0, plane.rowLength) }
            }
            for y in 0..<rows {
                let start = (top + y) * stride + left * 4
                guard start + rowBytes <= available else { break }
                let from = UnsafeRawPointer(base + offset + start)
                let to = plane.baseAddress + y * plane.bytesPerRow
                if format.pixelFormat.swapsRedAndBlue {
                    swapRedAndBlue(from, to, pixels: rowBytes / 4)
                } else {
                    memcpy(to, from, rowBytes)
                }
            }
        }
    }

    private static func swapRedAndBlue(_ from: UnsafeRawPointer, _ to: UnsafeMutableRawPointer, pixels: Int) {
        let source = from.assumingMemoryBound(to: UInt8.self)
        let destination = to.assumingMemoryBound(to: UInt8.self)
        for i in 0..<pixels {
            let p = 4 * i
            destination[p] = source[p + 2]
            destination[p + 1] = source[p + 1]
            destination[p + 2] = source[p]
            destination[p + 3] = source[p + 3]
        }
    }
}
