import CoreMedia

// row: CMTime
// row: CMTimeValue
// row: CMTimeScale
func frameTime(_ frame: CMTimeValue, fps: CMTimeScale) -> CMTime { CMTime(value: frame, timescale: fps) }

// row: CMTimeMake
// row: CMTimeMakeWithSeconds
// row: CMTimeGetSeconds
func seconds() -> Double { CMTimeGetSeconds(CMTimeMake(value: 1, timescale: 30)) + CMTimeGetSeconds(CMTimeMakeWithSeconds(0.5, preferredTimescale: 600)) }

// row: kCMTimeZero
// row: kCMTimeInvalid
// row: kCMTimePositiveInfinity
// row: kCMTimeNegativeInfinity
// row: kCMTimeIndefinite
let specialTimes = [kCMTimeZero, kCMTimeInvalid, kCMTimePositiveInfinity, kCMTimeNegativeInfinity, kCMTimeIndefinite, CMTime.zero]

// row: CMTimeAdd
// row: CMTimeSubtract
// row: CMTimeCompare
func later(_ a: CMTime, _ b: CMTime) -> CMTime { CMTimeCompare(CMTimeAdd(a, b), CMTimeSubtract(a, b)) > 0 ? CMTimeAdd(a, b) : a }

// row: CMTimeMultiply
// row: CMTimeMultiplyByRatio
// row: CMTimeMultiplyByFloat64
func scaled(_ t: CMTime) -> [CMTime] { [CMTimeMultiply(t, multiplier: 3), CMTimeMultiplyByRatio(t, multiplier: 1, divisor: 2), CMTimeMultiplyByFloat64(t, multiplier: 1.5)] }

// row: CMTimeConvertScale
// row: CMTimeMaximum
// row: CMTimeMinimum
// row: CMTimeAbsoluteValue
func clamp(_ t: CMTime) -> CMTime { CMTimeConvertScale(CMTimeMinimum(CMTimeMaximum(CMTimeAbsoluteValue(t), .zero), CMTimeMake(value: 10, timescale: 1)), timescale: 600) }

// row: CMTIME_IS_VALID
// row: CMTIME_IS_INVALID
// row: CMTIME_IS_NUMERIC
func usable(_ t: CMTime) -> Bool { CMTIME_IS_VALID(t) && !CMTIME_IS_INVALID(t) && CMTIME_IS_NUMERIC(t) }

// row: CMTimeRange
// row: CMTimeRangeMake
func range(from start: CMTime) -> CMTimeRange { CMTimeRangeMake(start: start, duration: CMTimeMake(value: 10, timescale: 1)) }

// row: CMClock
// row: CMClockGetHostTimeClock
// row: CMClockGetTime
func hostTimeNow() -> CMTime { let clock: CMClock = CMClockGetHostTimeClock(); return CMClockGetTime(clock) }

// row: CMSampleBuffer
// row: CMSampleBufferGetPresentationTimeStamp
// row: CMSampleBufferGetImageBuffer
// row: CMSampleBufferGetDuration
func picture(of sampleBuffer: CMSampleBuffer) -> (CVImageBuffer, CMTime, CMTime)? {
    guard let imageBuffer = CMSampleBufferGetImageBuffer(sampleBuffer) else { return nil }
    return (imageBuffer, CMSampleBufferGetPresentationTimeStamp(sampleBuffer), CMSampleBufferGetDuration(sampleBuffer))
}

// row: CMItemCount
// row: CMSampleBufferGetNumSamples
// row: CMSampleBufferIsValid
// row: CMSampleBufferDataIsReady
func frames(in sampleBuffer: CMSampleBuffer) -> CMItemCount {
    guard CMSampleBufferIsValid(sampleBuffer), CMSampleBufferDataIsReady(sampleBuffer) else { return 0 }
    return CMSampleBufferGetNumSamples(sampleBuffer)
}

// row: CMSampleBuffer.imageBuffer
// row: CMSampleBuffer.duration
// row: CMSampleBuffer.numSamples
func modern(_ sampleBuffer: CMSampleBuffer) -> String { "\(sampleBuffer.imageBuffer != nil) \(sampleBuffer.duration) \(sampleBuffer.numSamples)" }

// row: CMFormatDescription
// row: CMSampleBufferGetFormatDescription
// row: CMVideoFormatDescriptionGetDimensions
// row: CMVideoDimensions
func size(of sampleBuffer: CMSampleBuffer) -> CMVideoDimensions? {
    guard let formatDescription: CMFormatDescription = CMSampleBufferGetFormatDescription(sampleBuffer) else { return nil }
    return CMVideoFormatDescriptionGetDimensions(formatDescription)
}

// row: CMVideoFormatDescription
// row: CMAudioFormatDescription
// row: CMVideoFormatDescriptionCreateForImageBuffer
// row: OSStatus
func describe(_ pixelBuffer: CVPixelBuffer) -> CMVideoFormatDescription? {
    var formatDescription: CMVideoFormatDescription?
    let status: OSStatus = CMVideoFormatDescriptionCreateForImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: pixelBuffer, formatDescriptionOut: &formatDescription)
    let _: CMAudioFormatDescription? = nil
    return status == 0 ? formatDescription : nil
}

// row: CMSampleTimingInfo
// row: CMSampleBufferCreateForImageBuffer
// row: CMSampleBufferMakeDataReadyCallback
// row: kCMSampleBufferError_RequiredParameterMissing
func sampleBuffer(_ pixelBuffer: CVPixelBuffer, format: CMVideoFormatDescription, at time: CMTime) -> CMSampleBuffer? {
    var timing = CMSampleTimingInfo(duration: .invalid, presentationTimeStamp: time, decodeTimeStamp: .invalid)
    var sampleBuffer: CMSampleBuffer?
    let callback: CMSampleBufferMakeDataReadyCallback? = nil
    let err = CMSampleBufferCreateForImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: pixelBuffer, dataReady: true, makeDataReadyCallback: callback,
                                                 refcon: nil, formatDescription: format, sampleTiming: &timing, sampleBufferOut: &sampleBuffer)
    return err == kCMSampleBufferError_RequiredParameterMissing ? nil : sampleBuffer
}
