import CoreMedia
import Foundation
import ScreenCaptureKit

// row: SCShareableContent
// row: SCShareableContent.current
// row: SCShareableContent.displays
// row: SCDisplay
// row: SCDisplay.displayID
// row: SCDisplay.width
// row: SCDisplay.height
// row: SCDisplay.frame
func firstDisplay() async throws -> SCDisplay? {
    let content: SCShareableContent = try await SCShareableContent.current
    guard let display: SCDisplay = content.displays.first else { return nil }
    print("display \(display.displayID): \(display.width)x\(display.height) at \(display.frame)")
    return display
}

// row: SCShareableContent.excludingDesktopWindows(_:onScreenWindowsOnly:)
// row: SCShareableContent.windows
// row: SCShareableContent.applications
// row: SCWindow
// row: SCWindow.windowID
// row: SCWindow.frame
// row: SCWindow.title
// row: SCWindow.owningApplication
// row: SCWindow.isOnScreen
// row: SCWindow.windowLayer
// row: SCRunningApplication
// row: SCRunningApplication.applicationName
// row: SCRunningApplication.bundleIdentifier
// row: SCRunningApplication.processID
func listWindows() async throws {
    let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
    for window: SCWindow in content.windows where window.isOnScreen && window.windowLayer == 0 {
        let app: SCRunningApplication? = window.owningApplication
        print(window.windowID, window.title ?? "", window.frame, app?.applicationName ?? "", app?.bundleIdentifier ?? "", app?.processID ?? 0)
    }
    print("\(content.applications.count) applications")
}

// row: SCShareableContent.content(xDisplay:excludeDesktopWindows:onScreenWindowsOnly:)
// row: SCDisplay.name
func monitorsOf(xDisplay: String) async throws -> [String] {
    try await SCShareableContent.content(xDisplay: xDisplay).displays.map(\.name)
}

// row: SCContentFilter
// row: SCContentFilter.init(display:excludingWindows:)
// row: SCContentFilter.contentRect
// row: SCContentFilter.pointPixelScale
func displayFilter(_ display: SCDisplay) throws -> SCContentFilter {
    let filter = try SCContentFilter(display: display, excludingWindows: [])
    print(filter.contentRect, filter.pointPixelScale)
    return filter
}

// row: SCContentFilter.init(desktopIndependentWindow:)
func windowFilter(_ window: SCWindow) -> SCContentFilter { SCContentFilter(desktopIndependentWindow: window) }

// row: SCStreamConfiguration
// row: SCStreamConfiguration.init()
// row: SCStreamConfiguration.width
// row: SCStreamConfiguration.height
// row: SCStreamConfiguration.minimumFrameInterval
// row: SCStreamConfiguration.pixelFormat
// row: SCStreamConfiguration.showsCursor
// row: SCStreamConfiguration.sourceRect
// row: SCStreamConfiguration.scalesToFit
// row: SCStreamConfiguration.queueDepth
// row: SCStreamConfiguration.capturesAudio
// row: SCStreamConfiguration.sampleRate
// row: SCStreamConfiguration.channelCount
// row: SCStreamConfiguration.excludesCurrentProcessAudio
// row: SCStreamConfiguration.captureMicrophone
// row: SCStreamConfiguration.microphoneCaptureDeviceID
func streamConfiguration() -> SCStreamConfiguration {
    let configuration = SCStreamConfiguration()
    configuration.width = 1920
    configuration.height = 1080
    configuration.minimumFrameInterval = CMTime(value: 1, timescale: 60)
    configuration.pixelFormat = kCVPixelFormatType_32BGRA
    configuration.showsCursor = true
    configuration.sourceRect = .zero
    configuration.scalesToFit = true
    configuration.queueDepth = 5
    configuration.capturesAudio = false
    configuration.sampleRate = 48_000
    configuration.channelCount = 2
    configuration.excludesCurrentProcessAudio = true
    configuration.captureMicrophone = false
    configuration.microphoneCaptureDeviceID = nil
    return configuration
}

// row: SCStreamOutput
// row: SCStreamOutput.stream(_:didOutputSampleBuffer:of:)
// row: SCStreamOutputType
// row: SCFrameStatus
// row: SCStreamFrameInfo
// row: SCStreamFrameInfo.status
// row: SCStreamFrameInfo.dirtyRects
// row: SCStreamFrameInfo.contentRect
// row: SCStreamFrameInfo.displayTime
// row: SCStreamFrameInfo.scaleFactor
// row: CMSampleBufferGetSampleAttachmentsArray
// row: SCStreamDelegate
// row: SCStreamDelegate.stream(_:didStopWithError:)
final class CaptureOutput: SCStreamOutput, SCStreamDelegate {
    func stream(_ stream: SCStream, didOutputSampleBuffer sampleBuffer: CMSampleBuffer, of type: SCStreamOutputType) {
        guard type == .screen,
              let attachmentsArray = CMSampleBufferGetSampleAttachmentsArray(sampleBuffer, createIfNecessary: false) as? [[SCStreamFrameInfo: Any]],
              let attachments = attachmentsArray.first,
              let statusRawValue = attachments[SCStreamFrameInfo.status] as? Int,
              let status = SCFrameStatus(rawValue: statusRawValue), status == .complete else { return }
        let dirty = attachments[.dirtyRects] as? [CGRect] ?? []
        let content = attachments[.contentRect] as? CGRect ?? .zero
        let time = attachments[.displayTime] as? UInt64 ?? 0
        let scale = attachments[.scaleFactor] as? Double ?? 1
        print(dirty.count, content, time, scale)
    }

    func stream(_ stream: SCStream, didStopWithError error: any Error) { print("stream stopped: \(error)") }
}

// row: SCStream
// row: SCStream.init(filter:configuration:delegate:)
// row: SCStream.addStreamOutput(_:type:sampleHandlerQueue:)
// row: SCStream.startCapture()
// row: SCStream.stopCapture()
// row: SCStream.removeStreamOutput(_:type:)
// row: SCStream.droppedFrameCount
func captureStream(_ filter: SCContentFilter, for seconds: Int) async throws {
    let output = CaptureOutput()
    let stream = SCStream(filter: filter, configuration: streamConfiguration(), delegate: output)
    try stream.addStreamOutput(output, type: .screen, sampleHandlerQueue: DispatchQueue(label: "frames"))
    try await stream.startCapture()
    try await Task.sleep(for: .seconds(seconds))
    try await stream.stopCapture()
    try stream.removeStreamOutput(output, type: .screen)
    print("\(stream.droppedFrameCount) dropped")
}

// row: SCScreenshotManager
// row: SCScreenshotManager.captureImage(contentFilter:configuration:)
// row: SCScreenshotManager.captureSampleBuffer(contentFilter:configuration:)
func screenshot(_ filter: SCContentFilter) async throws -> (CVPixelBuffer, CMSampleBuffer) {
    let image = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: streamConfiguration())
    let sample = try await SCScreenshotManager.captureSampleBuffer(contentFilter: filter, configuration: streamConfiguration())
    return (image, sample)
}

// row: SCRecordingOutputDelegate
// row: SCRecordingOutputDelegate.recordingOutputDidStartRecording(_:)
// row: SCRecordingOutputDelegate.recordingOutput(_:didFailWithError:)
// row: SCRecordingOutputDelegate.recordingOutputDidFinishRecording(_:)
final class ScreenRecordingDelegate: SCRecordingOutputDelegate {
    func recordingOutputDidStartRecording(_ recordingOutput: SCRecordingOutput) { print("recording") }
    func recordingOutput(_ recordingOutput: SCRecordingOutput, didFailWithError error: any Error) { print("failed: \(error)") }
    func recordingOutputDidFinishRecording(_ recordingOutput: SCRecordingOutput) { print("finished") }
}

// row: SCRecordingOutputConfiguration
// row: SCRecordingOutputConfiguration.init()
// row: SCRecordingOutputConfiguration.outputURL
// row: SCRecordingOutputConfiguration.outputFileType
// row: SCRecordingOutputConfiguration.videoCodecType
// row: SCRecordingOutput
// row: SCRecordingOutput.init(configuration:delegate:)
// row: SCRecordingOutput.recordedDuration
// row: SCRecordingOutput.recordedFileSize
// row: SCRecordingOutput.skippedFrameCount
// row: SCStream.addRecordingOutput(_:)
// row: SCStream.removeRecordingOutput(_:)
func record(_ stream: SCStream, to url: URL, delegate: ScreenRecordingDelegate) async throws {
    let configuration = SCRecordingOutputConfiguration()
    configuration.outputURL = url
    configuration.outputFileType = .mov
    configuration.videoCodecType = .hevc
    let recordingOutput = SCRecordingOutput(configuration: configuration, delegate: delegate)
    try stream.addRecordingOutput(recordingOutput)
    try await Task.sleep(for: .seconds(10))
    try stream.removeRecordingOutput(recordingOutput)
    print(recordingOutput.recordedDuration.seconds, recordingOutput.recordedFileSize, recordingOutput.skippedFrameCount)
}

// row: SCStream.updateConfiguration(_:)
// row: SCStream.updateContentFilter(_:)
func update(_ stream: SCStream, to filter: SCContentFilter) async throws {
    let configuration = streamConfiguration()
    configuration.showsCursor = false
    try await stream.updateConfiguration(configuration)
    try await stream.updateContentFilter(filter)
}

// row: SCShareableContent.windowsUnavailableReason
func whyNoWindows() async throws -> String? {
    try await SCShareableContent.current.windowsUnavailableReason
}

// row: SCContentFilter.init(display:including:)
// row: SCContentFilter.init(display:includingApplications:exceptingWindows:)
func onlySomeWindows(_ display: SCDisplay, _ windows: [SCWindow], _ apps: [SCRunningApplication]) -> [SCContentFilter] {
    [try? SCContentFilter(display: display, including: windows),
     try? SCContentFilter(display: display, includingApplications: apps, exceptingWindows: [])].compactMap { $0 }
}

// row: SCContentFilter.init(display:excludingApplications:exceptingWindows:)
func withoutThisApp(_ content: SCShareableContent, _ display: SCDisplay) throws -> SCContentFilter {
    let me = content.applications.filter { $0.processID == ProcessInfo.processInfo.processIdentifier }
    return try SCContentFilter(display: display, excludingApplications: me, exceptingWindows: [])
}

// row: SCContentSharingPicker
// row: SCContentSharingPicker.shared
// row: SCContentSharingPicker.defaultConfiguration
// row: SCContentSharingPicker.isActive
// row: SCContentSharingPicker.add(_:)
// row: SCContentSharingPicker.present()
// row: SCContentSharingPickerConfiguration
// row: SCContentSharingPickerMode
// row: SCContentSharingPickerObserver
final class PickerController: NSObject, SCContentSharingPickerObserver {
    func start() {
        let picker = SCContentSharingPicker.shared
        var configuration = SCContentSharingPickerConfiguration()
        let modes: SCContentSharingPickerMode = [.singleWindow, .singleDisplay]
        configuration.allowedPickerModes = modes
        picker.defaultConfiguration = configuration
        picker.add(self)
        picker.isActive = true
        picker.present()
    }
    func contentSharingPicker(_ picker: SCContentSharingPicker, didCancelFor stream: SCStream?) {}
    func contentSharingPicker(_ picker: SCContentSharingPicker, didUpdateWith filter: SCContentFilter, for stream: SCStream?) {
        print("picked \(filter.contentRect)")
    }
    func contentSharingPickerStartDidFailWithError(_ error: any Error) { print(error) }
}

// row: SCContentSharingPicker.present(using:)
// row: SCContentSharingPicker.present(for:using:)
// row: SCContentSharingPicker.remove(_:)
// row: SCShareableContentStyle
func pickWindow(_ controller: PickerController, for stream: SCStream?) {
    let style: SCShareableContentStyle = .window
    SCContentSharingPicker.shared.present(using: style)
    SCContentSharingPicker.shared.present(for: stream, using: .display)
    SCContentSharingPicker.shared.remove(controller)
}
