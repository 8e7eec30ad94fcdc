// SwiftRecord.md, the landing page.
import Foundation
import SwiftRecord

func landingPageSnippet() async throws {
    let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "fade.mp4"))
    let input = AssetWriterInput(outputSettings: VideoSettings(
        codec: .h264, width: 640, height: 360, rateControl: .averageBitRate(1_000_000),
        expectedSourceFrameRate: Rational(30)))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)

    for frame in 0..<90 {
        guard let buffer = try adaptor.pixelBufferPool?.makePixelBuffer() else { break }
        buffer.withWriteAccess { planes in
            for (index, plane) in planes.enumerated() {
                let value = index == 0 ? UInt8(frame * 255 / 89) : 128   // luma fades in, chroma grey
                plane.baseAddress.initializeMemory(as: UInt8.self, repeating: value, count: plane.bytesPerRow * plane.height)
            }
        }
        try await adaptor.append(buffer, withPresentationTime: MediaTime(value: Int64(frame), timescale: 30))
    }
    input.markAsFinished()
    try await writer.finishWriting()
}
