// libFuzzer target for the broadcast wire protocol's parser (a sender's datagrams as the
// recorder reads them): every input gives a message or a BroadcastProtocolError, never a
// trap, and a message that parses encodes back to the same bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBroadcastMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    if let broken = exerciseBroadcastMessageParser(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("fuzz contract: \(broken)")
    }
    return 0
}
