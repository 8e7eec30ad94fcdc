// libFuzzer target for the command line's value parsers (size, frame rate, bit rate,
// duration, region, names among a few, byte sizes, --overlay, --audio, the source stall). Built by fuzz/run.sh together with the parser sources; every input
// must end in a value or a SwiftRecordError, never a trap, and accepted values must be
// within the documented bounds.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValueParsers(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    exerciseValueParsers(text)
    return 0
}
