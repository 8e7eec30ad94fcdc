// README.md's Swift snippet, compiled so the documentation cannot rot: README's block
// appears here verbatim (ReadmeSnippetTests checks that); this target is only built,
// never run.
import Foundation
import SwiftRecord

let writer = try AssetWriter(outputURL: URL(fileURLWithPath: "tone.mp4"))
let video = AssetWriterInput(outputSettings: VideoSettings(codec: .h264, width: 1280, height: 720,
    rateControl: .averageBitRate(2_000_000), expectedSourceFrameRate: Rational(30)))
let sound = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .aac))
let adaptor = PixelBufferAdaptor(assetWriterInput: video)
try writer.add(video)
try writer.add(sound)
try writer.startWriting()
try writer.startSession(atSourceTime: .zero)
let stereo = AudioFormat(sampleType: .f32, sampleRate: 48_000, channelLayout: .stereo)
for frame in 0..<300 {                                              // 30 fps, 1600 samples a frame
    let picture = try adaptor.pixelBufferPool!.makePixelBuffer()    // pooled: no allocation per frame
    picture.withWriteAccess { planes in /* draw into planes[0].baseAddress, bytesPerRow apart */ }
    try adaptor.append(picture, withPresentationTime: MediaTime(value: Int64(frame), timescale: 30))
    let samples = (0..<1600).flatMap { i in [Float](repeating: Float(sin(Double(frame * 1600 + i) * 0.0576)) * 0.2, count: 2) }
    try sound.append(try AudioSampleBuffer(format: stereo, presentationTimeStamp: MediaTime(value: Int64(frame * 1600), timescale: 48_000),
                                           interleaved: samples))
}
video.markAsFinished()
sound.markAsFinished()
try await writer.finishWriting()
