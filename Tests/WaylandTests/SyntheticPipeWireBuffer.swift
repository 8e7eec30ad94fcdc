// A PipeWire buffer made in memory, as the stream hands them over, for the tests of what
// the Wayland source does with pictures Mutter 43 never sends (another size, damage metadata).
import Foundation
import SwiftRecord
internal import CPipeWire

/// One MemPtr plane of `width`x`height` 4-byte pixels, rows `stride` bytes apart, each pixel
/// `pixel`'s bytes; optionally damage metadata (`SPA_META_VideoDamage`, room for `damageCapacity`
/// regions) and a crop region (`SPA_META_VideoCrop`).
final class SyntheticBuffer {
    let width: Int, height: Int, stride: Int
    let memory: UnsafeMutableRawPointer
    let chunk = UnsafeMutablePointer<spa_chunk>.allocate(capacity: 1)
    let data = UnsafeMutablePointer<spa_data>.allocate(capacity: 1)
    let buffer = UnsafeMutablePointer<spa_buffer>.allocate(capacity: 1)
    let pw = UnsafeMutablePointer<pw_buffer>.allocate(capacity: 1)
    let metas = UnsafeMutablePointer<spa_meta>.allocate(capacity: 2)
    let damage: UnsafeMutablePointer<spa_meta_region>
    let damageCapacity: Int
    let crop = UnsafeMutablePointer<spa_meta_region>.allocate(capacity: 1)

    init(width: Int, height: Int, stride: Int, pixel: [UInt8], damageCapacity: Int = 16) {
        (self.width, self.height, self.stride) = (width, height, stride)
        let size = stride * height
        memory = .allocate(byteCount: size, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0x55, count: size)
        self.damageCapacity = damageCapacity
        damage = .allocate(capacity: damageCapacity)
        damage.initialize(repeating: spa_meta_region(), count: damageCapacity)
        crop.initialize(to: spa_meta_region())
        metas.initialize(repeating: spa_meta(), count: 2)
        chunk.initialize(to: spa_chunk())
        chunk.pointee.size = UInt32(size)
        chunk.pointee.stride = Int32(stride)
        data.initialize(to: spa_data())
        data.pointee.type = SPA_DATA_MemPtr.rawValue
        data.pointee.maxsize = UInt32(size)
        data.pointee.data = memory
        data.pointee.chunk = chunk
        buffer.initialize(to: spa_buffer())
        buffer.pointee.n_datas = 1
        buffer.pointee.datas = data
        buffer.pointee.metas = metas
        pw.initialize(to: pw_buffer())
        pw.pointee.buffer = buffer
        fill(PixelRegion(x: 0, y: 0, width: width, height: height), with: pixel)
    }

    /// Paints `rect` with `pixel`'s 4 bytes.
    func fill(_ rect: PixelRegion, with pixel: [UInt8]) {
        let bytes = memory.assumingMemoryBound(to: UInt8.self)
        for y in rect.y..<rect.y + rect.height {
            for x in rect.x..<rect.x + rect.width { for c in 0..<4 { bytes[y * stride + x * 4 + c] = pixel[c] } }
        }
    }

    /// Attaches damage metadata listing `rects` (the rest of its room zeroed), and a crop
    /// region when `cropTo` is given; nil `rects`: no damage metadata.
    func setMetadata(damage rects: [PixelRegion]?, cropTo: PixelRegion? = nil) {
        var n: UInt32 = 0
        if let rects {
            for i in 0..<damageCapacity {
                damage[i] = spa_meta_region()
                if i < rects.count {
                    let r = rects[i]
                    damage[i].region = spa_region(position: spa_point(x: Int32(r.x), y: Int32(r.y)),
                                                  size: spa_rectangle(width: UInt32(r.width), height: UInt32(r.height)))
                }
            }
            metas[Int(n)] = spa_meta(type: SPA_META_VideoDamage.rawValue, size: UInt32(MemoryLayout<spa_meta_region>.stride * damageCapacity),
                                     data: UnsafeMutableRawPointer(damage))
            n += 1
        }
        if let c = cropTo {
            crop.pointee.region = spa_region(position: spa_point(x: Int32(c.x), y: Int32(c.y)),
                                             size: spa_rectangle(width: UInt32(c.width), height: UInt32(c.height)))
            metas[Int(n)] = spa_meta(type: SPA_META_VideoCrop.rawValue, size: UInt32(MemoryLayout<spa_meta_region>.size),
                                     data: UnsafeMutableRawPointer(crop))
            n += 1
        }
        buffer.pointee.n_metas = n
    }

    /// The plane as a BGRA pixel buffer of its own (BGRx and BGRA layouts only).
    func bgra() throws -> PixelBuffer {
        let picture = try PixelBuffer(width: width, height: height, pixelFormat: .bgra)
        picture.withWriteAccess { planes in
            for y in 0..<height {
                memcpy(planes[0].baseAddress + y * planes[0].bytesPerRow, memory + y * stride, width * 4)
            }
        }
        return picture
    }

    deinit {
        memory.deallocate()
        chunk.deallocate()
        data.deallocate()
        buffer.deallocate()
        pw.deallocate()
        metas.deallocate()
        damage.deallocate()
        crop.deallocate()
    }
}
