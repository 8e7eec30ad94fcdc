// RosyWriter's CPU renderer: takes the green out of each BGRA picture, in place. Core Video
// calls as Apple writes them; nothing here is platform-specific.
import CoreVideo

enum RosyCPURenderer {
    /// Sets every pixel's green byte to 0 (BGRA: blue, green, red, alpha).
    static func render(_ pixelBuffer: CVPixelBuffer) {
        guard CVPixelBufferGetPixelFormatType(pixelBuffer) == kCVPixelFormatType_32BGRA else {
            print("RosyCPURenderer: expects BGRA pictures")
            return
        }
        let bytesPerPixel = 4
        CVPixelBufferLockBaseAddress(pixelBuffer, [])
        defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, []) }
        let bufferHeight = CVPixelBufferGetHeight(pixelBuffer)
        let bufferWidth = CVPixelBufferGetWidth(pixelBuffer)
        let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
        guard let baseAddress = CVPixelBufferGetBaseAddress(pixelBuffer) else { return }
        let pixels = baseAddress.assumingMemoryBound(to: UInt8.self)
        for row in 0..<bufferHeight {
            let line = pixels + row * bytesPerRow
            for column in 0..<bufferWidth {
                line[column * bytesPerPixel + 1] = 0   // de-green
            }
        }
    }
}
