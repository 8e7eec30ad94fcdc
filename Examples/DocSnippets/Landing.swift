// SwiftRecord.md, the landing page.
import Foundation
import SwiftRecord

func landingPageSnippet() async throws {
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "fade.mp4"))
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: 640, height: 360,
        rateControl: .averageBitRate(1_000_000),
        expectedSourceFrameRate: Rational(30)))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    for frame in 0..<90 {
        guard let pool = adaptor.pixelBufferPool else { break }
        let buffer = try pool.makePixelBuffer()
        buffer.withWriteAccess { planes in
            for (index, plane) in planes.enumerated() {
                // Luma fades in; chroma stays grey.
                let value = index == 0 ? UInt8(frame * 255 / 89) : 128
                plane.baseAddress.initializeMemory(
                    as: UInt8.self, repeating: value,
                    count: plane.bytesPerRow * plane.height)
            }
        }
        let time = MediaTime(value: Int64(frame), timescale: 30)
        try await adaptor.append(buffer, withPresentationTime: time)
    }
    input.markAsFinished()
    try await writer.finishWriting()
}
