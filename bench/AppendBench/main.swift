// AppendBench: the native writer's append path, for instruction counts (bench/append_cost.py
// runs it under callgrind). Appends `frames` 1280x720 pictures in `format` (yuv420p, the
// encoder's own, or bgra, converted by the adaptor) through AssetWriter, AssetWriterInput
// and PixelBufferAdaptor declared for that same format and size (the common case), H.264
// ultrafast, one thread, into an MP4 in a temporary folder. The pictures are three pool
// buffers filled once and appended in turn, so what is counted beyond the encoder is the
// append, the queue, the pipeline and the muxer.
//
//   AppendBench [yuv420p|bgra] [frames]
import Foundation
import SwiftRecord

let args = CommandLine.arguments.dropFirst()
let format: PixelFormat = args.first == "bgra" ? .bgra : .yuv420p
let frames = args.dropFirst().first.flatMap(Int.init) ?? 120
let (width, height) = (1280, 720)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appendbench-\(getpid())")
do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let writer = try AssetWriter(outputURL: directory.appendingPathComponent("a.mp4"))
    let input = AssetWriterInput(outputSettings: VideoSettings(width: width, height: height, expectedSourceFrameRate: Rational(30, 1),
                                                               preset: "ultrafast", threads: 1))
    let adaptor = PixelBufferAdaptor(assetWriterInput: input,
                                     sourcePixelBufferAttributes: PixelBufferAttributes(width: width, height: height, pixelFormat: format))
    try writer.add(input)
    try writer.startWriting()
    try writer.startSession(atSourceTime: .zero)
    guard let pool = adaptor.pixelBufferPool else { throw SwiftRecordError(.invalidState, operation: "AppendBench", message: "no pool") }
    // Three pictures of horizontal bands (a little for the encoder to code, the same every run).
    let pictures = try (0..<3).map { n -> PixelBuffer in
        let b = try pool.makePixelBuffer()
        b.withWriteAccess { planes in
            for p in planes {
                for row in 0..<p.height {
                    (p.baseAddress + row * p.bytesPerRow).initializeMemory(as: UInt8.self, repeating: UInt8((row / 8 * 16 + 40 * n) & 0xff),
                                                                           count: p.bytesPerRow)
                }
            }
        }
        return b
    }
    for i in 0..<frames {
        try adaptor.append(pictures[i % pictures.count], withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
    }
    input.markAsFinished()
    try await writer.finishWriting()
    guard writer.status == .completed else { throw SwiftRecordError(.invalidState, operation: "AppendBench", message: "writer \(writer.status)") }
} catch {
    print("AppendBench: \(error)")
    exit(1)
}
