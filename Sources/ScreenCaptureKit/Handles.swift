// Outputs and delegates held by a stream or a recording. Apple's protocols are not
// `Sendable` (a ported output is an ordinary `NSObject` subclass with mutable state), so
// the stream enforces what Apple's documents: an output is called only on its sample
// handler queue (serial, one picture at a time), a delegate only from the stream's one
// capture task or its stop, never two calls at once. Delegates are held weakly, as Apple's
// stream and recording output hold theirs.

struct OutputHandle: @unchecked Sendable {
    let object: any SCStreamOutput
}

struct StreamDelegateHandle: @unchecked Sendable {
    weak var object: (any SCStreamDelegate)?
}

struct RecordingDelegateHandle: @unchecked Sendable {
    weak var object: (any SCRecordingOutputDelegate)?
}

struct PickerObserverHandle: @unchecked Sendable {
    let object: any SCContentSharingPickerObserver
}
