import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// Fills an I420 buffer with deterministic content: noise (so rate control has work to
/// do) seeded by `seed`, or a flat value.
func fill(_ buffer: PixelBuffer, seed: UInt64? = nil, value: UInt8 = 128) {
    buffer.withWriteAccess { planes in
        var state = (seed ?? 0) &* 0x9E37_79B9_7F4A_7C15 | 1
        for plane in planes {
            for row in 0..<plane.height {
                let line = plane.baseAddress + row * plane.bytesPerRow
                if seed == nil {
                    line.initializeMemory(as: UInt8.self, repeating: value, count: plane.rowLength)
                    continue
                }
                let words = plane.rowLength / 8
                let p = line.assumingMemoryBound(to: UInt64.self)
                for i in 0..<words {
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    // Low-amplitude noise (values 88…103): busy enough that rate control has
                    // work to do, compressible enough that 2 Mbit/s is reachable at 720p.
                    p[i] = (state & 0x0F0F_0F0F_0F0F_0F0F) &+ 0x5858_5858_5858_5858
                }
                for i in (words * 8)..<plane.rowLength { line.storeBytes(of: UInt8(truncatingIfNeeded: state >> 3), toByteOffset: i, as: UInt8.self) }
            }
        }
    }
}

struct WrittenFile {
    let url: URL
}

/// Writes `frames` frames at `fps` through a writer with `settings`, frame i stamped i/fps.
@discardableResult
func writeClip(to url: URL, fileType: FileType? = nil, settings: VideoSettings, frames: Int, fps: Int32 = 30,
               noise: Bool = true, scene: Bool = false, startAt: Int = 0, optimize: Bool = false, configure: (AssetWriter) -> Void = { _ in }) async throws -> AssetWriter {
    let writer = try fileType.map { AssetWriter(outputURL: url, fileType: $0) } ?? AssetWriter(outputURL: url)
    writer.shouldOptimizeForNetworkUse = optimize
    configure(writer)
    let input = AssetWriterInput(outputSettings: settings)
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)
    let pool = try XCTUnwrap(adaptor.pixelBufferPool)
    let renderer = scene ? try SyntheticScene(width: settings.width, height: settings.height) : nil
    for i in startAt..<(startAt + frames) {
        let b = try pool.makePixelBuffer()
        if let renderer { try renderer.render(frame: i, into: b) } else if noise { fill(b, seed: UInt64(i + 1)) } else { fill(b, value: UInt8(truncatingIfNeeded: 16 + i)) }
        try await adaptor.append(b, withPresentationTime: MediaTime(value: Int64(i), timescale: fps))
    }
    input.markAsFinished()
    try await writer.finishWriting()
    XCTAssertEqual(writer.status, .completed)
    return writer
}


/// The blocking append, callable from async tests (where `append` resolves to the async overload).
func syncAppend(_ adaptor: PixelBufferAdaptor, _ buffer: PixelBuffer, _ time: MediaTime) throws {
    try adaptor.append(buffer, withPresentationTime: time)
}
