import CoreVideo

// row: CVPixelBuffer
// row: CVPixelBufferCreate
// row: CFAllocator
// row: kCFAllocatorDefault
// row: CFDictionary
// row: CVReturn
// row: kCVReturnSuccess
func makeBuffer() -> CVPixelBuffer? {
    var pixelBuffer: CVPixelBuffer?
    let attributes: [String: Any] = [kCVPixelBufferCGImageCompatibilityKey as String: true]
    let allocator: CFAllocator? = kCFAllocatorDefault
    let status: CVReturn = CVPixelBufferCreate(allocator, 640, 480, kCVPixelFormatType_32BGRA, attributes as CFDictionary, &pixelBuffer)
    return status == kCVReturnSuccess ? pixelBuffer : nil
}

// row: CVPixelBufferPool
// row: CVPixelBufferPoolCreate
// row: CVPixelBufferPoolCreatePixelBuffer
// row: kCVPixelBufferPoolMinimumBufferCountKey
// row: CFString
func makePool() -> CVPixelBuffer? {
    var pool: CVPixelBufferPool?
    let key: CFString = kCVPixelBufferPoolMinimumBufferCountKey
    let poolAttributes: [String: Any] = [key as String: 6]
    let pixelBufferAttributes: [String: Any] = [
        kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr8BiPlanarFullRange,
        kCVPixelBufferWidthKey as String: 1920,
        kCVPixelBufferHeightKey as String: 1080,
        kCVPixelBufferIOSurfacePropertiesKey as String: [String: Any](),
    ]
    CVPixelBufferPoolCreate(kCFAllocatorDefault, poolAttributes as CFDictionary, pixelBufferAttributes as CFDictionary, &pool)
    var pixelBuffer: CVPixelBuffer?
    guard let pool, CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pixelBuffer) == kCVReturnSuccess else { return nil }
    return pixelBuffer
}

// row: CVPixelBufferLockBaseAddress
// row: CVPixelBufferUnlockBaseAddress
// row: CVPixelBufferLockFlags
// row: CVOptionFlags
// row: CVPixelBufferGetBaseAddress
// row: CVPixelBufferGetBytesPerRow
// row: CVPixelBufferGetWidth
// row: CVPixelBufferGetHeight
func fillBlue(_ pixelBuffer: CVPixelBuffer) {
    CVPixelBufferLockBaseAddress(pixelBuffer, CVPixelBufferLockFlags(rawValue: CVOptionFlags(0)))
    defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, []) }
    guard let base = CVPixelBufferGetBaseAddress(pixelBuffer) else { return }
    for y in 0..<CVPixelBufferGetHeight(pixelBuffer) {
        (base + y * CVPixelBufferGetBytesPerRow(pixelBuffer)).initializeMemory(as: UInt32.self, repeating: 0xFF00_00FF, count: CVPixelBufferGetWidth(pixelBuffer))
    }
}

// row: CVPixelBufferGetPlaneCount
// row: CVPixelBufferIsPlanar
// row: CVPixelBufferGetBaseAddressOfPlane
// row: CVPixelBufferGetBytesPerRowOfPlane
// row: CVPixelBufferGetWidthOfPlane
// row: CVPixelBufferGetHeightOfPlane
func clearChroma(_ pixelBuffer: CVPixelBuffer) {
    guard CVPixelBufferIsPlanar(pixelBuffer), CVPixelBufferGetPlaneCount(pixelBuffer) == 2 else { return }
    CVPixelBufferLockBaseAddress(pixelBuffer, [])
    if let chroma = CVPixelBufferGetBaseAddressOfPlane(pixelBuffer, 1) {
        let rowBytes = CVPixelBufferGetWidthOfPlane(pixelBuffer, 1) * 2
        for row in 0..<CVPixelBufferGetHeightOfPlane(pixelBuffer, 1) {
            (chroma + row * CVPixelBufferGetBytesPerRowOfPlane(pixelBuffer, 1)).initializeMemory(as: UInt8.self, repeating: 128, count: rowBytes)
        }
    }
    CVPixelBufferUnlockBaseAddress(pixelBuffer, [])
}

// row: CVPixelBufferGetPixelFormatType
// row: OSType
// row: kCVPixelFormatType_32BGRA
// row: kCVPixelFormatType_32ARGB
// row: kCVPixelFormatType_32RGBA
// row: kCVPixelFormatType_24RGB
// row: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange
// row: kCVPixelFormatType_420YpCbCr8BiPlanarFullRange
// row: kCVPixelFormatType_420YpCbCr8Planar
// row: kCVPixelFormatType_420YpCbCr8PlanarFullRange
// row: kCVPixelFormatType_422YpCbCr8
// row: kCVPixelFormatType_422YpCbCr8_yuvs
// row: kCVPixelFormatType_OneComponent8
func isYUV(_ pixelBuffer: CVPixelBuffer) -> Bool {
    let format: OSType = CVPixelBufferGetPixelFormatType(pixelBuffer)
    switch format {
    case kCVPixelFormatType_32BGRA, kCVPixelFormatType_32ARGB, kCVPixelFormatType_32RGBA, kCVPixelFormatType_24RGB, kCVPixelFormatType_OneComponent8: return false
    case kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, kCVPixelFormatType_420YpCbCr8Planar,
         kCVPixelFormatType_420YpCbCr8PlanarFullRange, kCVPixelFormatType_422YpCbCr8, kCVPixelFormatType_422YpCbCr8_yuvs: return true
    default: return false
    }
}

// row: kCVPixelBufferPixelFormatTypeKey
// row: kCVPixelBufferWidthKey
// row: kCVPixelBufferHeightKey
// row: kCVPixelBufferIOSurfacePropertiesKey
// row: kCVPixelBufferCGImageCompatibilityKey
// row: kCVPixelBufferCGBitmapContextCompatibilityKey
// row: kCVPixelBufferMetalCompatibilityKey
// row: kCVPixelBufferOpenGLESCompatibilityKey
// row: kCVPixelBufferBytesPerRowAlignmentKey
func attributes() -> [String: Any] { [
    kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
    kCVPixelBufferWidthKey as String: 1280,
    kCVPixelBufferHeightKey as String: 720,
    kCVPixelBufferIOSurfacePropertiesKey as String: [String: Any](),
    kCVPixelBufferCGImageCompatibilityKey as String: true,
    kCVPixelBufferCGBitmapContextCompatibilityKey as String: true,
    kCVPixelBufferMetalCompatibilityKey as String: true,
    kCVPixelBufferOpenGLESCompatibilityKey as String: true,
    kCVPixelBufferBytesPerRowAlignmentKey as String: 64,
] }

// row: kCVReturnError
// row: kCVReturnInvalidArgument
// row: kCVReturnAllocationFailed
// row: kCVReturnUnsupported
// row: kCVReturnInvalidPixelFormat
// row: kCVReturnInvalidSize
// row: kCVReturnInvalidPixelBufferAttributes
// row: kCVReturnPoolAllocationFailed
// row: kCVReturnWouldExceedAllocationThreshold
func explain(_ status: CVReturn) -> String {
    switch status {
    case kCVReturnError, kCVReturnInvalidArgument, kCVReturnUnsupported: "failed"
    case kCVReturnAllocationFailed, kCVReturnPoolAllocationFailed, kCVReturnWouldExceedAllocationThreshold: "no memory or buffer"
    case kCVReturnInvalidPixelFormat, kCVReturnInvalidSize, kCVReturnInvalidPixelBufferAttributes: "bad attributes"
    default: "ok"
    }
}

// row: CVImageBuffer
func asImage(_ pixelBuffer: CVPixelBuffer) -> CVImageBuffer { pixelBuffer }
