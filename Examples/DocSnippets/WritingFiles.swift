// WritingFiles.md: capture sources made by name (its writer block is in main.swift: at
// top level, as the article shows it, the synchronous append is the one called).
import Foundation
import SwiftRecord
import SwiftRecordX11

func writingFilesSourceSnippet() throws {

    X11Source.register()
    var options = CaptureSourceOptions(frameRate: Rational(30)!)
    options.configure(X11Source.Configuration(display: ":1", area: .region(PixelRegion(x: 100, y: 50, width: 641, height: 360)),
                                              showsCursor: false))          // .screen, .region(…), .window(id)
    options.configure(RawVideoFileSource.Configuration(path: "in.yuv", pixelFormat: .nv12))  // for --source yuv
    let source = try CaptureSourceRegistry.shared.makeSource(named: "x11", options: options)
    print(source.captureDescription ?? source.identifier)  // region 100,50,641,360 of display :1 at 642x360
    source.notices.forEach { print($0) }                   // capturing 100,50,642,360 instead of …: 4:2:0 video needs even sides
}
