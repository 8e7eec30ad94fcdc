// Cameras were in this module until they got one of their own: code that reaches
// `CameraSource` and `PipeWireNode` through `import SwiftRecordWayland` keeps compiling.
@_exported import SwiftRecordCamera
@_exported import SwiftRecordPipeWire
