// Grabs the X11 screen as fast as it can and prints how many frames per second that is:
// the capture side alone, without encoding. bench/x11 compares it with ffmpeg's x11grab.
//
//   X11GrabRate [--display :1] [--frames 600] [--no-cursor] [--no-shm] [--region x,y,w,h]
import Foundation
import SwiftRecord
import SwiftRecordX11

var configuration = X11Source.Configuration()
var frames = 600
var arguments = CommandLine.arguments.dropFirst()
func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("X11GrabRate: \(text)\n".utf8))
    exit(2)
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--display": configuration.display = arguments.popFirst()
    case "--frames":
        guard let n = arguments.popFirst().flatMap(Int.init), n > 0 else { fail("--frames needs a positive number") }
        frames = n
    case "--no-cursor": configuration.showsCursor = false
    case "--no-shm": configuration.allowsSharedMemory = false
    case "--region":
        guard let text = arguments.popFirst(), let r = try? ValueParsing.region(text) else { fail("--region needs x,y,w,h") }
        configuration.area = .region(r)
    default: fail("unknown argument \(argument)")
    }
}

do {
    let source = try X11Source(configuration: configuration)
    try source.start()
    defer { source.stop() }
    let size = source.nativeSize
    let pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: source.pixelFormat, maximumBufferCount: 4)
    let clock = MonotonicClock()
    // A few frames first, so segments and pages exist before the clock starts.
    for _ in 0..<5 { _ = try source.nextFrame(from: pool) }
    let start = clock.now()
    for _ in 0..<frames {
        guard try source.nextFrame(from: pool) != nil else { break }
    }
    let seconds = (clock.now() - start).seconds
    print(String(format: "%d frames of %@ in %.3f s: %.1f frames/s (%@%@)", frames, size.description, seconds, Double(frames) / seconds,
                 source.usesSharedMemory ? "MIT-SHM" : "XGetImage", configuration.showsCursor ? ", cursor" : ""))
} catch let error as SwiftRecordError {
    fail(error.description)
}
