// libFuzzer target for the YUV4MPEG2 stream-header parser: every line must give a header
// within bounds or a SwiftRecordError naming the field, never a trap.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzY4MHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    exerciseY4MHeaderParser(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
