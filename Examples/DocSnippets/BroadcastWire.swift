// RecordingAnotherProcess.md: the sender alone (neither FFmpeg nor Foundation).
import SwiftRecordBroadcastWire

func lightBroadcastSenderSnippet() throws {
    let sender = BroadcastSampleHandler(name: "demo", stream: .init(width: 1280, height: 720))   // 30 fps, 48 kHz stereo
    try sender.broadcastStarted(withSetupInfo: ["name": "my game"])
    for frame in 0..<300 {
        let time = BroadcastSampleHandler.now()                             // CLOCK_MONOTONIC, nanoseconds
        if let picture = try sender.nextPicture() {                         // nil: none free, frame dropped
            for row in 0..<720 {                                            // a grey that brightens
                (picture.y + row * picture.yBytesPerRow).update(repeating: UInt8(16 + frame % 200), count: 1280)
            }
            for row in 0..<360 {                                            // neutral chroma
                (picture.u + row * picture.uBytesPerRow).update(repeating: 128, count: 640)
                (picture.v + row * picture.vBytesPerRow).update(repeating: 128, count: 640)
            }
            try sender.processSampleBuffer(picture, presentationTime: time, with: .video)
        }
    }
    try sender.broadcastFinished()
}
