// As on the Mac, `import ScreenCaptureKit` brings Core Media (CMTime, CMSampleBuffer),
// Core Video and Foundation (CGRect) with it.
@_exported import CoreMedia
@_exported import Foundation
