import Foundation

// The runs of SwiftRecord's `MediaCaptureSession` an `AVCaptureSession` is made of: every
// change (start, stop, a file started or stopped) runs on `transitions`, one at a time.
extension AVCaptureSession {
    /// Starts recording `output`'s pending file: ends the data outputs' run, starts one with
    /// the file. The delegate is told when the file starts, or why it could not.
    func startRecording(_ output: AVCaptureFileOutput) {
        transitions.async { [self] in
            guard state.withLock({ $0.running }) else {
                return output.finish(.failure(SwiftRecordError(.invalidState, operation: "startRecording(to:recordingDelegate:)",
                                                               message: "the session is not running; call startRunning() first")))
            }
            endRun()
            do { try beginRun(recording: output) } catch {
                output.finish(.failure(error))
                resumeDataOutputs()
            }
        }
    }

    /// Ends `output`'s file (the delegate is told once it is finished); the data outputs'
    /// run resumes.
    func stopRecording(_ output: AVCaptureFileOutput) {
        transitions.async { [self] in
            guard state.withLock({ $0.run?.movie === output }) else { return }
            endRun()
            resumeDataOutputs()
        }
    }

    /// After a file, or a run that ended by itself: the data outputs' run, when the session
    /// still runs and has none.
    func resumeDataOutputs() {
        guard state.withLock({ $0.running && $0.run == nil }) else { return }
        do { try beginRun(recording: nil) } catch { log.error("AVCaptureSession: the data outputs stopped: \(error)") }
    }

    /// Starts a run of SwiftRecord's session with the inputs, the data outputs with a
    /// delegate and `recording`'s file; with no file and no such data output, nothing runs.
    /// On `transitions`.
    func beginRun(recording: AVCaptureFileOutput?) throws {
        let (inputs, outputs, preset) = state.withLock { ($0.inputs, $0.outputs, $0.preset) }
        var dataOutputs: [CaptureDataOutput] = []
        for output in outputs {
            if let output = output as? AVCaptureVideoDataOutput, let native = output.nativeOutput() { dataOutputs.append(native) }
            if let output = output as? AVCaptureAudioDataOutput, let native = output.nativeOutput() { dataOutputs.append(native) }
        }
        let file = recording.flatMap { output in output.pendingRecording.map { (output, $0.url) } }
        guard file != nil || !dataOutputs.isEmpty else { return }
        guard inputs.contains(where: { ($0 as? AVCaptureDeviceInput)?.mediaType == .video }) else {
            throw SwiftRecordError(.unsupported, operation: "AVCaptureSession",
                                   message: "the session has no camera input; here a session records or hands over sound only beside a camera's pictures")
        }
        var captureInputs: [CaptureInput] = []
        do {
            for case let input as AVCaptureDeviceInput in inputs {
                captureInputs.append(try input.captureInput(size: preset.size))
            }
        } catch {
            Self.close(captureInputs)
            throw error
        }
        let frameRate = captureInputs.lazy.compactMap { input -> Rational? in
            if case .video(let source) = input.source { return source.nativeFrameRate }
            return nil
        }.first ?? Rational(30)!
        let limit = recording.map(\.maxRecordedDuration).flatMap { $0.isNumeric && $0 > .zero ? CaptureLimit(duration: $0) : nil }
        let native = MediaCaptureSession(frameRate: frameRate, limit: limit ?? CaptureLimit())
        var nativeMovie: CaptureMovieFileOutput?
        do {
            for input in captureInputs { try native.addInput(input) }
            for output in dataOutputs { try native.addOutput(output) }
            if let (output, url) = file, let movie = output as? AVCaptureMovieFileOutput {
                let made = movie.nativeOutput(url)
                nativeMovie = made
                try native.addOutput(made)
            }
            try native.startRunning()
        } catch {
            Self.close(captureInputs)
            throw error
        }
        let run = Run(native: native, movie: recording)
        state.withLock { $0.run = run }
        recording?.started(by: native, into: nativeMovie)
        Task { [self] in
            let result: Result<CaptureStatistics?, any Error>
            do { result = .success(try await native.waitUntilStopped()) } catch { result = .failure(error) }
            let endedByItself = state.withLock { s -> Bool in
                guard s.run === run else { return false }
                s.run = nil
                return true
            }
            run.movie?.finish(result)
            if case .failure(let error) = result, run.movie == nil { log.error("AVCaptureSession: the run ended: \(error)") }
            run.ended.signal()
            if endedByItself { transitions.async { [self] in resumeDataOutputs() } }
        }
    }

    /// Ends the current run, if any, and waits until it has (the file finished). On `transitions`.
    func endRun() {
        guard let run = state.withLock({ s -> Run? in
            defer { s.run = nil }
            return s.run
        }) else { return }
        run.native.stop()
        // A run ends promptly once stopped (the file finished); one that does not is said,
        // not waited for forever.
        if run.ended.wait(timeout: .now() + 120) == .timedOut {
            log.error("AVCaptureSession: a run did not end within 120 s of being stopped; going on without it")
        }
    }

    /// Stops sources opened for a run that did not start.
    private static func close(_ inputs: [CaptureInput]) {
        for input in inputs {
            switch input.source {
            case .video(let source): source.stop()
            case .audio(let source): source.stop()
            }
        }
    }
}
