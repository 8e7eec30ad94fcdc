import AVFoundation

// row: AVCaptureSession
// row: AVCaptureSession.init()
// row: AVCaptureSession.Preset
// row: AVCaptureSession.sessionPreset
// row: AVCaptureSession.canSetSessionPreset(_:)
// row: AVCaptureSession.beginConfiguration()
// row: AVCaptureSession.commitConfiguration()
func makeSession() -> AVCaptureSession {
    let session = AVCaptureSession()
    session.beginConfiguration()
    let preset: AVCaptureSession.Preset = .hd1280x720
    if session.canSetSessionPreset(preset) { session.sessionPreset = preset }
    session.commitConfiguration()
    return session
}

// row: AVCaptureDevice
// row: AVCaptureDevice.default(for:)
// row: AVCaptureDevice.localizedName
// row: AVCaptureDevice.uniqueID
// row: AVCaptureDevice.hasMediaType(_:)
func defaultCamera() -> AVCaptureDevice? {
    guard let camera = AVCaptureDevice.default(for: .video), camera.hasMediaType(.video) else { return nil }
    print("camera \(camera.localizedName) (\(camera.uniqueID))")
    return camera
}

// row: AVCaptureDevice.default(_:for:position:)
// row: AVCaptureDevice.DeviceType
// row: AVCaptureDevice.Position
// row: AVCaptureDevice.deviceType
// row: AVCaptureDevice.position
func backCamera() -> AVCaptureDevice? {
    let types: [AVCaptureDevice.DeviceType] = [.builtInDualCamera, .builtInWideAngleCamera]
    for type in types {
        if let device = AVCaptureDevice.default(type, for: .video, position: AVCaptureDevice.Position.back) {
            print(device.deviceType == .builtInWideAngleCamera, device.position == .unspecified)
            return device
        }
    }
    return nil
}

// row: AVCaptureDevice.DiscoverySession
// row: AVCaptureDeviceDiscoverySession
// row: AVCaptureDeviceDiscoverySession.init(deviceTypes:mediaType:position:)
// row: AVCaptureDeviceDiscoverySession.devices
func microphones() -> [AVCaptureDevice] {
    let discovery: AVCaptureDeviceDiscoverySession = AVCaptureDevice.DiscoverySession(
        deviceTypes: [.microphone], mediaType: .audio, position: .unspecified)
    return discovery.devices
}

// row: AVCaptureDevice.authorizationStatus(for:)
// row: AVCaptureDevice.requestAccess(for:completionHandler:)
// row: AVAuthorizationStatus
func askForTheCamera() {
    let status: AVAuthorizationStatus = AVCaptureDevice.authorizationStatus(for: .video)
    if status == .notDetermined {
        AVCaptureDevice.requestAccess(for: .video) { granted in print("granted: \(granted)") }
    }
}

// row: AVCaptureInput
// row: AVCaptureDeviceInput
// row: AVCaptureDeviceInput.init(device:)
// row: AVCaptureDeviceInput.device
// row: AVCaptureSession.canAddInput(_:)
// row: AVCaptureSession.addInput(_:)
// row: AVCaptureSession.inputs
// row: AVCaptureSession.removeInput(_:)
func addMicrophone(to session: AVCaptureSession) throws {
    guard let microphone = AVCaptureDevice.default(for: .audio) else { return }
    let input = try AVCaptureDeviceInput(device: microphone)
    if session.canAddInput(input) { session.addInput(input) }
    let added: [AVCaptureInput] = session.inputs
    if let first = added.first as? AVCaptureDeviceInput, first.device !== microphone { session.removeInput(first) }
}

// row: AVCaptureOutput
// row: AVCaptureMovieFileOutput
// row: AVCaptureMovieFileOutput.init()
// row: AVCaptureMovieFileOutput.movieFragmentInterval
// row: AVCaptureFileOutput.maxRecordedDuration
// row: AVCaptureSession.canAddOutput(_:)
// row: AVCaptureSession.addOutput(_:)
// row: AVCaptureSession.outputs
// row: AVCaptureSession.removeOutput(_:)
func addMovieOutput(to session: AVCaptureSession) -> AVCaptureMovieFileOutput {
    let movieFileOutput = AVCaptureMovieFileOutput()
    movieFileOutput.movieFragmentInterval = CMTime(seconds: 2, preferredTimescale: 600)
    movieFileOutput.maxRecordedDuration = CMTime(seconds: 60, preferredTimescale: 600)
    if session.canAddOutput(movieFileOutput) { session.addOutput(movieFileOutput) }
    let outputs: [AVCaptureOutput] = session.outputs
    if outputs.count > 2 { session.removeOutput(movieFileOutput) }
    return movieFileOutput
}

// row: AVCaptureOutput.connections
// row: AVCaptureOutput.connection(with:)
// row: AVCaptureConnection
// row: AVCaptureConnection.output
// row: AVCaptureConnection.isEnabled
// row: AVCaptureConnection.isActive
func videoConnection(of output: AVCaptureOutput) -> AVCaptureConnection? {
    print("\(output.connections.count) connections")
    guard let connection = output.connection(with: .video), connection.isEnabled, connection.isActive else { return nil }
    return connection.output === output ? connection : nil
}

// row: AVCaptureSession.startRunning()
// row: AVCaptureSession.stopRunning()
// row: AVCaptureSession.isRunning
func run(_ session: AVCaptureSession, for seconds: Double) {
    session.startRunning()
    if session.isRunning { Thread.sleep(forTimeInterval: seconds) }
    session.stopRunning()
}

// row: AVCaptureFileOutputRecordingDelegate
// row: AVCaptureFileOutputRecordingDelegate.fileOutput(_:didStartRecordingTo:from:)
// row: AVCaptureFileOutputRecordingDelegate.fileOutput(_:didFinishRecordingTo:from:error:)
// row: AVCaptureFileOutput
// row: AVCaptureFileOutput.recordedDuration
final class RecordingDelegate: NSObject, AVCaptureFileOutputRecordingDelegate {
    func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection]) {
        print("recording \(fileURL.lastPathComponent)")
    }
    func fileOutput(_ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL,
                    from connections: [AVCaptureConnection], error: Error?) {
        print("\(outputFileURL.lastPathComponent): \(CMTimeGetSeconds(output.recordedDuration)) s, error \(String(describing: error))")
    }
}

// row: AVCaptureFileOutput.startRecording(to:recordingDelegate:)
// row: AVCaptureFileOutput.stopRecording()
// row: AVCaptureFileOutput.isRecording
// row: AVCaptureFileOutput.outputFileURL
func toggleRecording(_ movieFileOutput: AVCaptureMovieFileOutput, delegate: RecordingDelegate) {
    if !movieFileOutput.isRecording {
        movieFileOutput.startRecording(to: URL(fileURLWithPath: "movie.mov"), recordingDelegate: delegate)
    } else {
        movieFileOutput.stopRecording()
        print(movieFileOutput.outputFileURL?.path ?? "")
    }
}

// row: AVCaptureVideoDataOutputSampleBufferDelegate
// row: AVCaptureVideoDataOutputSampleBufferDelegate.captureOutput(_:didOutput:from:)
// row: AVCaptureAudioDataOutputSampleBufferDelegate
// row: AVCaptureAudioDataOutputSampleBufferDelegate.captureOutput(_:didOutput:from:)
final class SampleReceiver: NSObject, AVCaptureVideoDataOutputSampleBufferDelegate, AVCaptureAudioDataOutputSampleBufferDelegate {
    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
        if output is AVCaptureVideoDataOutput, let pixelBuffer = CMSampleBufferGetImageBuffer(sampleBuffer) {
            print("picture \(CVPixelBufferGetWidth(pixelBuffer)) at \(CMTimeGetSeconds(CMSampleBufferGetPresentationTimeStamp(sampleBuffer)))")
        }
    }
}

// row: AVCaptureVideoDataOutput
// row: AVCaptureVideoDataOutput.init()
// row: AVCaptureVideoDataOutput.alwaysDiscardsLateVideoFrames
// row: AVCaptureVideoDataOutput.setSampleBufferDelegate(_:queue:)
// row: AVCaptureVideoDataOutput.sampleBufferDelegate
// row: AVCaptureVideoDataOutput.sampleBufferCallbackQueue
func videoDataOutput(_ receiver: SampleReceiver) -> AVCaptureVideoDataOutput {
    let videoDataOutput = AVCaptureVideoDataOutput()
    videoDataOutput.alwaysDiscardsLateVideoFrames = true
    videoDataOutput.setSampleBufferDelegate(receiver, queue: DispatchQueue(label: "video data"))
    precondition(videoDataOutput.sampleBufferDelegate != nil && videoDataOutput.sampleBufferCallbackQueue != nil)
    return videoDataOutput
}

// row: AVCaptureAudioDataOutput
// row: AVCaptureAudioDataOutput.init()
// row: AVCaptureAudioDataOutput.setSampleBufferDelegate(_:queue:)
// row: AVCaptureAudioDataOutput.sampleBufferDelegate
// row: AVCaptureAudioDataOutput.sampleBufferCallbackQueue
func audioDataOutput(_ receiver: SampleReceiver) -> AVCaptureAudioDataOutput {
    let audioDataOutput = AVCaptureAudioDataOutput()
    audioDataOutput.setSampleBufferDelegate(receiver, queue: DispatchQueue(label: "audio data"))
    precondition(audioDataOutput.sampleBufferDelegate != nil && audioDataOutput.sampleBufferCallbackQueue != nil)
    return audioDataOutput
}
