// AllocBench: heap allocations per frame on the append path after warm-up, for a video
// input (640x360 yuv420p pictures appended through a PixelBufferAdaptor, H.264 ultrafast,
// one thread), an audio input (1024-sample f32 stereo buffers, AAC) and an audio input that
// mixes two sources (`mixVolumes`; a 1024-sample buffer appended to each per frame), each
// into an MP4.
// Run under LD_PRELOAD=alloc-counter.so (bench/alloc-counter.c; bench/run builds it):
// it counts every malloc-family call, and apart from them those made outside FFmpeg's
// encode and write calls (a packet's buffer, the muxer's interleaving queue are FFmpeg's).
// The pictures are a few pool buffers appended in turn, the sound one buffer re-stamped,
// so what is counted is the append, the queue, the pipeline and the encoder wrapper.
// Prints one line of JSON.
//
//   LD_PRELOAD=/path/alloc-counter.so AllocBench [warm-up frames] [measured frames]
import Foundation
import SwiftRecord
#if canImport(Glibc)
import Glibc
#endif

typealias Counter = @convention(c) () -> UInt64
func counter(_ name: String) -> Counter? {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, name) else { return nil }
    return unsafeBitCast(symbol, to: Counter.self)
}
guard let total = counter("sr_bench_allocations_total"), let outside = counter("sr_bench_allocations_outside_ffmpeg") else {
    print("AllocBench: run with LD_PRELOAD=alloc-counter.so (bench/alloc-counter.c)")
    exit(2)
}
let args = CommandLine.arguments.dropFirst()
let warmUp = args.first.flatMap(Int.init) ?? 200
let measured = args.dropFirst().first.flatMap(Int.init) ?? 600
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("allocbench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

/// Appends `warmUp + measured` samples with `append(i)`, letting the pipeline drain before
/// each count; returns allocations per measured sample (all, outside FFmpeg).
func measure(_ writer: AssetWriter, _ append: (Int) throws -> Void) async throws -> (Double, Double) {
    for i in 0..<warmUp { try append(i) }
    usleep(300_000)
    let (t0, o0) = (total(), outside())
    for i in warmUp..<(warmUp + measured) { try append(i) }
    usleep(300_000)
    let (t1, o1) = (total(), outside())
    try await writer.finishWriting()
    return (Double(t1 - t0) / Double(measured), Double(o1 - o0) / Double(measured))
}

do {
    // Video.
    let videoWriter = try AssetWriter(outputURL: directory.appendingPathComponent("v.mp4"))
    let video = AssetWriterInput(outputSettings: VideoSettings(width: 640, height: 360, expectedSourceFrameRate: Rational(30, 1),
                                                               preset: "ultrafast", threads: 1))
    let adaptor = PixelBufferAdaptor(assetWriterInput: video)
    try videoWriter.add(video)
    try videoWriter.startWriting()
    try videoWriter.startSession(atSourceTime: .zero)
    guard let pool = adaptor.pixelBufferPool else { throw SwiftRecordError(.invalidState, operation: "AllocBench", message: "no pool") }
    let pictures = try (0..<3).map { n -> PixelBuffer in
        let b = try pool.makePixelBuffer()
        b.withWriteAccess { planes in for p in planes { p.baseAddress.initializeMemory(as: UInt8.self, repeating: UInt8(40 * n + 16), count: p.bytesPerRow * p.height) } }
        return b
    }
    let (videoTotal, videoOurs) = try await measure(videoWriter) { i in
        try adaptor.append(pictures[i % pictures.count], withPresentationTime: MediaTime(value: Int64(i), timescale: 30))
    }

    // Audio.
    let audioWriter = try AssetWriter(outputURL: directory.appendingPathComponent("a.mp4"))
    let audio = AssetWriterInput(outputSettings: AudioSettings())
    try audioWriter.add(audio)
    try audioWriter.startWriting()
    try audioWriter.startSession(atSourceTime: .zero)
    let format = AudioFormat(sampleType: .f32, sampleRate: 48_000)
    let tone = (0..<2048).map { Float(sin(Double($0 / 2) * 0.0575)) * 0.25 }
    let buffer = try AudioSampleBuffer(format: format, presentationTimeStamp: .zero, interleaved: tone)
    let (audioTotal, audioOurs) = try await measure(audioWriter) { i in
        try audio.append(buffer.withPresentationTimeStamp(MediaTime(value: Int64(i) * 1024, timescale: 48_000)))
    }

    // Two sources mixed into one track: per frame, one buffer of each.
    let mixWriter = try AssetWriter(outputURL: directory.appendingPathComponent("m.mp4"))
    let mix = try AssetWriterInput(outputSettings: AudioSettings(), mixVolumes: [1, 0.5])
    try mixWriter.add(mix)
    try mixWriter.startWriting()
    try mixWriter.startSession(atSourceTime: .zero)
    let (mixTotal, mixOurs) = try await measure(mixWriter) { i in
        let stamped = buffer.withPresentationTimeStamp(MediaTime(value: Int64(i) * 1024, timescale: 48_000))
        try mix.append(stamped, mixSource: 0)
        try mix.append(stamped, mixSource: 1)
    }
    print(String(format: "{\"video\": %.3f, \"videoWithFFmpeg\": %.3f, \"audio\": %.3f, \"audioWithFFmpeg\": %.3f, \"audioMix\": %.3f, \"audioMixWithFFmpeg\": %.3f, \"frames\": %d}",
                 videoOurs, videoTotal, audioOurs, audioTotal, mixOurs, mixTotal, measured))
} catch {
    print("AllocBench: \(error)")
    exit(1)
}
