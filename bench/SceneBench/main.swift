// SceneBench: how fast the synthetic scene renders, alone (no encoding), so benchmarks can
// show it is never what limits a recording. Prints one line of JSON.
//
//   SceneBench [WIDTHxHEIGHT] [frames]
import Foundation
import SwiftRecord

let args = CommandLine.arguments.dropFirst()
let size = args.first.flatMap(VideoSize.init(parsing:)) ?? VideoSize(width: 1920, height: 1080)
let frames = args.dropFirst().first.flatMap(Int.init) ?? 600
do {
    let scene = try SyntheticScene(width: size.width, height: size.height)
    let pool = try PixelBufferPool(width: size.width, height: size.height, pixelFormat: .yuv420p, maximumBufferCount: 2)
    let clock = MonotonicClock()
    let start = clock.now()
    for i in 0..<frames {
        let b = try pool.makePixelBuffer()
        try scene.render(frame: i, into: b)
    }
    let seconds = (clock.now() - start).seconds
    print("{\"frames\": \(frames), \"seconds\": \(seconds), \"fps\": \(Double(frames) / seconds)}")
} catch {
    print("SceneBench: \(error)")
    exit(1)
}
