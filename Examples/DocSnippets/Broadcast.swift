// RecordingAnotherProcess.md.
import SwiftRecord
import SwiftRecordBroadcast

func broadcastSenderSnippet() throws {
    let handler = BroadcastSampleHandler(name: "demo",
        stream: .init(width: 1920, height: 1080, frameRate: Rational(30)!, sampleRate: 48_000, channels: 2))
    try handler.broadcastStarted(withSetupInfo: ["name": "my game"])   // returns as the recording starts
    let scene = try SyntheticScene(width: 1920, height: 1080)
    for frame in 0..<300 {
        let time = MonotonicClock().now()                                 // CLOCK_MONOTONIC
        if let buffer = try handler.nextPixelBuffer() {                   // nil: none free, frame dropped
            try scene.render(frame: frame, into: buffer)                  // drawn straight into shared memory
            try handler.processSampleBuffer(SampleBuffer(pixelBuffer: buffer, presentationTimeStamp: time), with: .video)
        }
        try handler.processAudio([Int16](repeating: 0, count: 1600 * 2), presentationTime: time, with: .audioApp)
    }
    try handler.broadcastFinished()                                       // the recorder finishes its file
}
