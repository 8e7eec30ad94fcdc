// The movie half of Apple's AVCam, as a typical AVCaptureSession movie recorder writes it:
// the session set up on its own queue (authorization, beginConfiguration, the default
// camera with AVCam's fallbacks, the default microphone, an AVCaptureMovieFileOutput),
// started; a movie started with startRecording(to:recordingDelegate:) and stopped with
// stopRecording(); the delegate told when it starts and finishes. Apple's calls as written;
// the only edit is the import (this package's AVFoundation module), and the platform parts,
// marked, which on iOS are the user interface and the photo library.
import AVFoundation

final class MovieCaptureController: NSObject, AVCaptureFileOutputRecordingDelegate, @unchecked Sendable {
    enum SessionSetupResult {
        case success
        case notAuthorized
        case configurationFailed
    }

    let session = AVCaptureSession()
    private let sessionQueue = DispatchQueue(label: "session queue")
    private var setupResult: SessionSetupResult = .success
    private var videoDeviceInput: AVCaptureDeviceInput?
    private var movieFileOutput: AVCaptureMovieFileOutput?

    /// PLATFORM PART: on iOS the delegate updates the record button and saves the movie to
    /// the photo library; here it hands the outcome to the caller.
    var onStart: (@Sendable (URL) -> Void)?
    var onFinish: (@Sendable (URL, CMTime, Error?) -> Void)?

    // MARK: Session management

    func prepare() {
        switch AVCaptureDevice.authorizationStatus(for: .video) {
        case .authorized:
            break
        case .notDetermined:
            sessionQueue.suspend()
            AVCaptureDevice.requestAccess(for: .video) { granted in
                if !granted { self.setupResult = .notAuthorized }
                self.sessionQueue.resume()
            }
        default:
            setupResult = .notAuthorized
        }
        sessionQueue.async {
            self.configureSession()
        }
    }

    private func configureSession() {
        if setupResult != .success { return }

        session.beginConfiguration()
        session.sessionPreset = .high

        // Add video input.
        do {
            var defaultVideoDevice: AVCaptureDevice?
            if let dualCameraDevice = AVCaptureDevice.default(.builtInDualCamera, for: .video, position: .back) {
                defaultVideoDevice = dualCameraDevice
            } else if let dualWideCameraDevice = AVCaptureDevice.default(.builtInDualWideCamera, for: .video, position: .back) {
                defaultVideoDevice = dualWideCameraDevice
            } else if let backCameraDevice = AVCaptureDevice.default(.builtInWideAngleCamera, for: .video, position: .back) {
                defaultVideoDevice = backCameraDevice
            } else if let frontCameraDevice = AVCaptureDevice.default(.builtInWideAngleCamera, for: .video, position: .front) {
                defaultVideoDevice = frontCameraDevice
            }
            guard let videoDevice = defaultVideoDevice else {
                print("Default video device is unavailable.")
                setupResult = .configurationFailed
                session.commitConfiguration()
                return
            }
            let videoDeviceInput = try AVCaptureDeviceInput(device: videoDevice)
            if session.canAddInput(videoDeviceInput) {
                session.addInput(videoDeviceInput)
                self.videoDeviceInput = videoDeviceInput
            } else {
                print("Couldn't add video device input to the session.")
                setupResult = .configurationFailed
                session.commitConfiguration()
                return
            }
        } catch {
            print("Couldn't create video device input: \(error)")
            setupResult = .configurationFailed
            session.commitConfiguration()
            return
        }

        // Add an audio input device.
        do {
            if let audioDevice = AVCaptureDevice.default(for: .audio) {
                let audioDeviceInput = try AVCaptureDeviceInput(device: audioDevice)
                if session.canAddInput(audioDeviceInput) {
                    session.addInput(audioDeviceInput)
                } else {
                    print("Could not add audio device input to the session")
                }
            } else {
                print("Default audio device is unavailable.")
            }
        } catch {
            print("Could not create audio device input: \(error)")
        }

        // Add the movie file output.
        let movieFileOutput = AVCaptureMovieFileOutput()
        if session.canAddOutput(movieFileOutput) {
            session.addOutput(movieFileOutput)
            self.movieFileOutput = movieFileOutput
        } else {
            print("Could not add movie file output to the session")
            setupResult = .configurationFailed
        }

        session.commitConfiguration()
    }

    /// Starts the session; false when it could not be set up.
    func start() -> Bool {
        sessionQueue.sync {
            guard setupResult == .success else { return false }
            session.startRunning()
            return session.isRunning
        }
    }

    func stop() {
        sessionQueue.sync {
            if session.isRunning {
                session.stopRunning()
            }
        }
    }

    // MARK: Recording movies

    /// AVCam's record button: starts a movie, or stops the one recording.
    func toggleMovieRecording(to outputURL: URL) {
        guard let movieFileOutput = self.movieFileOutput else { return }
        sessionQueue.async {
            if !movieFileOutput.isRecording {
                movieFileOutput.startRecording(to: outputURL, recordingDelegate: self)
            } else {
                movieFileOutput.stopRecording()
            }
        }
    }

    func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection]) {
        onStart?(fileURL)
    }

    func fileOutput(_ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL,
                    from connections: [AVCaptureConnection], error: Error?) {
        if let error {
            print("Movie file finishing error: \(String(describing: error))")
        }
        onFinish?(outputFileURL, output.recordedDuration, error)
    }
}
