import Glibc
import SwiftRecordBase
import SwiftRecordBroadcastWire

// The C API of swift_record_sender.h over BroadcastSender (neither FFmpeg nor Foundation is
// loaded with it): each srs_sender is a retained Sender; a failure's text is kept for
// srs_last_error.

final class Sender {
    let handler: BroadcastSender
    var lastError: [CChar] = [0]
    init(handler: BroadcastSender) { self.handler = handler }

    func fail(_ error: Error) -> Int32 {
        lastError = Array("\(error)".utf8CString)
        return -1
    }
}

struct CPicture {
    var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)
    var strides: (Int32, Int32, Int32)
    var index: Int32
}

private func sender(_ pointer: OpaquePointer?) -> Sender? {
    pointer.map { Unmanaged<Sender>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("srs_connect")
public func srs_connect(_ name: UnsafePointer<CChar>?, _ width: Int32, _ height: Int32, _ fpsNum: Int32, _ fpsDen: Int32,
                        _ sampleRate: Int32, _ channels: Int32, _ error: UnsafeMutablePointer<CChar>?, _ errorSize: Int) -> OpaquePointer? {
    func say(_ text: String) -> OpaquePointer? {
        if let error, errorSize > 0 {
            let bytes = Array(text.utf8.prefix(errorSize - 1))
            for (i, b) in bytes.enumerated() { error[i] = CChar(bitPattern: b) }
            error[bytes.count] = 0
        }
        return nil
    }
    guard let name, fpsNum > 0, fpsDen > 0 else { return say("a name and a positive frame rate are needed") }
    let handler = BroadcastSender(name: String(cString: name),
                                  stream: .init(width: Int(width), height: Int(height), frameRateNumerator: Int(fpsNum), frameRateDenominator: Int(fpsDen),
                                                sampleRate: Int(sampleRate), channels: Int(channels)))
    do {
        try handler.start(senderName: "C sender")
    } catch {
        return say(error.message)
    }
    return OpaquePointer(Unmanaged.passRetained(Sender(handler: handler)).toOpaque())
}

@_cdecl("srs_next_picture")
public func srs_next_picture(_ pointer: OpaquePointer?, _ picture: UnsafeMutableRawPointer?) -> Int32 {
    guard let s = sender(pointer), let picture else { return -1 }
    do {
        guard let (index, ring) = try s.handler.lendSlot(), let base = ring.base(index) else { return 0 }
        let l = ring.layout
        let p = base.assumingMemoryBound(to: UInt8.self)
        picture.assumingMemoryBound(to: CPicture.self).pointee = CPicture(
            planes: (p + l.offsets[0], p + l.offsets[1], p + l.offsets[2]),
            strides: (Int32(l.strides[0]), Int32(l.strides[1]), Int32(l.strides[2])), index: Int32(index))
        return 1
    } catch {
        return s.fail(error)
    }
}

@_cdecl("srs_send_picture")
public func srs_send_picture(_ pointer: OpaquePointer?, _ picture: UnsafeRawPointer?, _ time: Int64) -> Int32 {
    guard let picture else { return -1 }
    return call(pointer) { (h: BroadcastSender) throws(BroadcastError) in
        try h.sendSlot(Int(picture.assumingMemoryBound(to: CPicture.self).pointee.index), time: time)
    }
}

@_cdecl("srs_send_sound")
public func srs_send_sound(_ pointer: OpaquePointer?, _ kind: Int32, _ samples: UnsafePointer<Int16>?, _ frames: Int32, _ time: Int64) -> Int32 {
    guard let s = sender(pointer) else { return -1 }
    guard let samples, frames > 0, kind == 1 || kind == 2 else {
        return s.fail(BroadcastError(message: "sound needs samples, a positive frame count and kind 1 (app) or 2 (mic)"))
    }
    let all = UnsafeBufferPointer(start: samples, count: Int(frames) * max(1, s.handler.stream.channels))
    return call(pointer) { (h: BroadcastSender) throws(BroadcastError) in try h.sendSound(all, time: time, kind: kind == 1 ? .app : .microphone) }
}

@_cdecl("srs_pause")
public func srs_pause(_ pointer: OpaquePointer?) -> Int32 {
    call(pointer) { (h: BroadcastSender) throws(BroadcastError) in try h.pause() }
}

@_cdecl("srs_resume")
public func srs_resume(_ pointer: OpaquePointer?) -> Int32 {
    call(pointer) { (h: BroadcastSender) throws(BroadcastError) in try h.resume() }
}

/// `body` on the sender's handler: 0, or -1 with the failure kept for srs_last_error.
private func call(_ pointer: OpaquePointer?, _ body: (BroadcastSender) throws(BroadcastError) -> Void) -> Int32 {
    guard let s = sender(pointer) else { return -1 }
    do {
        try body(s.handler)
        return 0
    } catch {
        return s.fail(error)
    }
}

@_cdecl("srs_dropped_frames")
public func srs_dropped_frames(_ pointer: OpaquePointer?) -> Int64 {
    Int64(sender(pointer)?.handler.counts.framesDropped ?? 0)
}

@_cdecl("srs_last_error")
public func srs_last_error(_ pointer: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let s = sender(pointer) else { return nil }
    return s.lastError.withUnsafeBufferPointer { UnsafePointer($0.baseAddress) }
}

@_cdecl("srs_close")
public func srs_close(_ pointer: OpaquePointer?) -> Int32 {
    guard let pointer else { return -1 }
    let s = Unmanaged<Sender>.fromOpaque(UnsafeRawPointer(pointer)).takeRetainedValue()
    do {
        try s.handler.finish()
        return 0
    } catch {
        return -1
    }
}

@_cdecl("srs_now_ns")
public func srs_now_ns() -> Int64 {
    monotonicNanoseconds()
}
