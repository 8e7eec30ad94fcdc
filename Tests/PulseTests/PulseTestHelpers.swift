import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Points this process's libpulse at `address` ($PULSE_SERVER) until `restore()`.
struct PulseServerEnvironment {
    private let previous: String?

    init(_ address: String) {
        previous = getenv("PULSE_SERVER").map { String(cString: $0) }
        setenv("PULSE_SERVER", address, 1)
    }

    func restore() {
        if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") }
    }
}

/// A 1 kHz tone, s16le stereo at 48 kHz, amplitude one half, `seconds` long.
func writeTone(to path: String, seconds: Double, frequency: Double = 1000) throws {
    let frames = Int(seconds * 48_000)
    var samples = [Int16](repeating: 0, count: frames * 2)
    for i in 0..<frames {
        let v = Int16(16_384 * sin(2 * Double.pi * frequency * Double(i) / 48_000))
        samples[2 * i] = v
        samples[2 * i + 1] = v
    }
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
}

/// Runs `body` on a thread of its own; nil if it has not returned within `timeout` seconds.
func runBounded<T: Sendable>(timeout: Double, _ body: @escaping @Sendable () -> T) -> T? {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    let thread = Thread {
        box.set(body())
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + timeout) == .success else { return nil }
    return box.get()
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?
    func set(_ v: T) { lock.withLock { value = v } }
    func get() -> T? { lock.withLock { value } }
}
