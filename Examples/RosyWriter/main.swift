// RosyWriter, the writer half: Apple's sample records the camera and microphone through a
// "rosy" filter that removes green, with MovieRecorder writing the movie. MovieRecorder.swift
// and RosyRenderer.swift are the port (Apple's calls as written, only the imports are this
// package's modules); this file is the platform part.
//
// PLATFORM PART — on iOS an AVCaptureSession delivers 640x480 BGRA camera frames to an
// AVCaptureVideoDataOutput delegate and 44.1 kHz microphone buffers to an
// AVCaptureAudioDataOutput delegate, stamped on the host clock. Here a synthetic camera
// fills BGRA buffers from a Core Video pool (a moving colour bar) and a synthetic
// microphone makes a 440 Hz tone in 1024-frame buffers, on the same clock and schedule.
//
//   swift run RosyWriter [output.mov] [seconds]
//
// Prints one line of JSON: video frames appended and dropped, and whether it finished.
import AVFoundation

let arguments = CommandLine.arguments
let url = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "rosy.mov")
let seconds = arguments.count > 2 ? max(1, Int(arguments[2]) ?? 2) : 2
let width = 640, height = 480, frameRate: Int32 = 30
let sampleRate = 44_100, audioChunk = 1024

/// The capture pipeline's side of the recorder: waits for it to be ready and to finish.
final class Pipeline: MovieRecorderDelegate, @unchecked Sendable {
    let prepared = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: Error?
    var error: Error? { lock.withLock { failure } }

    func movieRecorderDidFinishPreparing(_ recorder: MovieRecorder) { prepared.signal() }
    func movieRecorder(_ recorder: MovieRecorder, didFailWithError error: Error) {
        lock.withLock { failure = error }
        prepared.signal()
        done.signal()
    }
    func movieRecorderDidFinishRecording(_ recorder: MovieRecorder) { done.signal() }
}

/// PLATFORM PART: the camera's buffers, drawn with a bar that moves one step a frame.
func captureFrame(_ index: Int, from pool: CVPixelBufferPool) -> CVPixelBuffer? {
    var pixelBuffer: CVPixelBuffer?
    guard CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pixelBuffer) == kCVReturnSuccess, let pixelBuffer else { return nil }
    CVPixelBufferLockBaseAddress(pixelBuffer, [])
    if let base = CVPixelBufferGetBaseAddress(pixelBuffer) {
        let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
        let bar = (index * 8) % width
        for y in 0..<height {
            let row = (base + y * bytesPerRow).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                // BGRA in memory: 0xAARRGGBB as a little-endian word.
                row[x] = abs(x - bar) < 24 ? 0xFFFF_FFFF : 0xFF00_0000 | UInt32(x * 255 / width) << 16 | UInt32(y * 255 / height) << 8 | 0x60
            }
        }
    }
    CVPixelBufferUnlockBaseAddress(pixelBuffer, [])
    return pixelBuffer
}

/// PLATFORM PART: the microphone's buffer number `index`, a 440 Hz tone.
func captureAudio(_ index: Int, at time: CMTime) -> CMSampleBuffer? {
    let first = index * audioChunk
    let samples = (0..<audioChunk).map { i in
        Int16(8000 * sin(2 * Double.pi * 440 * Double(first + i) / Double(sampleRate)))
    }
    let format = AudioFormat(sampleType: .s16, sampleRate: sampleRate, channelLayout: .mono)
    guard let sound = try? AudioSampleBuffer(format: format, presentationTimeStamp: time, interleaved: samples) else { return nil }
    return .audio(sound)
}

var poolOut: CVPixelBufferPool?
let pixelBufferAttributes: [String: Any] = [
    kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
    kCVPixelBufferWidthKey as String: width,
    kCVPixelBufferHeightKey as String: height,
]
guard CVPixelBufferPoolCreate(kCFAllocatorDefault, nil, pixelBufferAttributes as CFDictionary, &poolOut) == kCVReturnSuccess,
      let cameraPool = poolOut, let firstFrame = captureFrame(0, from: cameraPool) else {
    fatalError("the synthetic camera could not start")
}
let start = CMClockGetTime(CMClockGetHostTimeClock())

// As RosyWriter's capture pipeline does with the first buffers the outputs deliver: the
// tracks are described from them, with no recommended settings (the recorder's defaults).
var videoFormat: CMFormatDescription?
_ = CMVideoFormatDescriptionCreateForImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: firstFrame, formatDescriptionOut: &videoFormat)
guard let videoFormat, let firstAudio = captureAudio(0, at: start),
      let audioFormat = CMSampleBufferGetFormatDescription(firstAudio) else { fatalError("no format descriptions") }

let pipeline = Pipeline()
let recorder = MovieRecorder(url: url, delegate: pipeline, callbackQueue: DispatchQueue(label: "pipeline callbacks"))
recorder.addVideoTrack(sourceFormatDescription: videoFormat, transform: .identity, settings: nil)
recorder.addAudioTrack(sourceFormatDescription: audioFormat, settings: nil)
recorder.prepareToRecord()
pipeline.prepared.wait()
if let error = pipeline.error { fatalError("preparing failed: \(error)") }

// PLATFORM PART: the capture schedule, in real time: frame k at k/30 s, audio buffer j at
// j*1024/44100 s, each delivered when due, as the capture outputs deliver them.
let clockStart = MonotonicClock.nanoseconds()
let frames = seconds * Int(frameRate)
let audioBuffers = seconds * sampleRate / audioChunk
var nextFrame = 0, nextAudio = 0
while nextFrame < frames || nextAudio < audioBuffers {
    let frameDue = nextFrame < frames ? Double(nextFrame) / Double(frameRate) : .infinity
    let audioDue = nextAudio < audioBuffers ? Double(nextAudio * audioChunk) / Double(sampleRate) : .infinity
    let due = min(frameDue, audioDue)
    let wait = due - Double(MonotonicClock.nanoseconds() - clockStart) / 1e9
    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
    if frameDue <= audioDue {
        let time = CMTimeAdd(start, CMTimeMake(value: Int64(nextFrame), timescale: frameRate))
        if let pixelBuffer = nextFrame == 0 ? firstFrame : captureFrame(nextFrame, from: cameraPool) {
            RosyCPURenderer.render(pixelBuffer)
            recorder.appendVideoPixelBuffer(pixelBuffer, withPresentationTime: time)
        }
        nextFrame += 1
    } else {
        let time = CMTimeAdd(start, CMTimeMake(value: Int64(nextAudio * audioChunk), timescale: Int32(sampleRate)))
        if let sample = nextAudio == 0 ? firstAudio : captureAudio(nextAudio, at: time) {
            recorder.appendAudioSampleBuffer(sample)
        }
        nextAudio += 1
    }
}
recorder.finishRecording()
pipeline.done.wait()
let counts = recorder.videoFrameCounts
print("{\"appended\": \(counts.appended), \"dropped\": \(counts.dropped), \"failed\": \(pipeline.error != nil)}")
if let error = pipeline.error { print("recording failed: \(error)") }
