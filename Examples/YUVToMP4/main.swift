// YUVToMP4: a raw I420 (or any raw layout) or .y4m file to MP4 with RawVideoConverter,
// the library behind `swift-record convert`.
//
//   swift run YUVToMP4 input.yuv 1280x720 [30000/1001] [output.mp4]
//   swift run YUVToMP4 input.y4m
//
// The converter checks the input against its size before anything is written, then
// reads each frame straight into a pooled buffer and hands it to the encoder.
import Foundation
import SwiftRecord

let args = Array(CommandLine.arguments.dropFirst())
guard let input = args.first else {
    FileHandle.standardError.write(Data("usage: YUVToMP4 input.yuv WIDTHxHEIGHT [fps] [output.mp4]\n       YUVToMP4 input.y4m [output.mp4]\n".utf8))
    exit(2)
}

/// Reads the optional size, rate and output name, converts, and reports.
func convert(_ input: String, _ rest: ArraySlice<String>) async throws(SwiftRecordError) {
    var options = RawVideoConverter.Options(input: input)
    var rest = rest
    if let size = rest.first, VideoSize(parsing: size) != nil {
        options.size = try ValueParsing.size(size)
        rest = rest.dropFirst()
        if let fps = rest.first, Rational(parsing: fps) != nil {
            options.frameRate = try ValueParsing.frameRate(fps)
            rest = rest.dropFirst()
        }
    }
    options.output = rest.first
    options.overwrite = true    // replace an earlier output, once the new one is complete

    let converter = try RawVideoConverter(options: options)
    let plan = converter.plan
    print("\(input): \(plan.input.size) \(plan.input.pixelFormat) at \(plan.input.frameRate) fps"
          + (plan.input.frameCount.map { ", \($0) frames" } ?? ""))
    for note in plan.notes { print("note: \(note)") }
    let result = try await converter.run()
    print("wrote \(result.outputPath): \(result.framesWritten) frames, \(String(format: "%.3f", result.duration.seconds)) s, \(result.outputBytes) bytes")
}

do {
    try await convert(input, args.dropFirst())
} catch {
    FileHandle.standardError.write(Data("YUVToMP4: \(error)\n".utf8))
    exit(1)
}
