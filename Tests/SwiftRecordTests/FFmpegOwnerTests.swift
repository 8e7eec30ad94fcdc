import Foundation
@testable import SwiftRecord
import TestSupport
import XCTest

/// The owners of FFmpeg's frames and packets (`Frame`, `Packet`) and the writing pipeline's
/// one clean-up path when opening fails (`PipelineOutputs.init`): whatever stage fails, no
/// file of this run is left, and a file it was to replace stays as it was.
final class FFmpegOwnerTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws { dir = try makeTemporaryDirectory() }
    override func tearDownWithError() throws { if let dir { try? FileManager.default.removeItem(at: dir) } }

    func testAReusedPacketHoldsEachCopyAndLetsItGo() throws {
        let packet = try Packet()
        try packet.set(copying: [1, 2, 3])
        XCTAssertEqual(packet.pointer.pointee.size, 3)
        try packet.set(copying: [9, 8, 7, 6, 5])
        XCTAssertEqual(packet.pointer.pointee.size, 5)
        XCTAssertEqual(packet.pointer.pointee.data?[0], 9)
        packet.unref()
        XCTAssertEqual(packet.pointer.pointee.size, 0)
        XCTAssertNil(packet.pointer.pointee.data)

        let copy = try Packet(copying: [4, 5])
        let reference = try Packet(referencing: copy.pointer)
        XCTAssertEqual(reference.pointer.pointee.size, 2)
        XCTAssertEqual(reference.pointer.pointee.data, copy.pointer.pointee.data, "a reference, not a copy")
    }

    func testAnEncoderThatRefusesToOpenLeavesNoFile() throws {
        let url = dir.appendingPathComponent("refused.mp4")
        let writer = try AssetWriter(outputURL: url)
        var settings = VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        settings.encoderOptions = ["no-such-option": "1"]
        try writer.add(AssetWriterInput(outputSettings: settings))
        XCTAssertThrowsError(try writer.startWriting())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "the file the opening created is removed")
    }

    func testAFailedOpeningKeepsTheFileItWasToReplace() throws {
        let url = dir.appendingPathComponent("kept.mp4")
        try Data("old".utf8).write(to: url)
        let writer = try AssetWriter(outputURL: url)
        writer.overwritesExistingFile = true
        var settings = VideoSettings(width: 64, height: 64, expectedSourceFrameRate: Rational(30), preset: "ultrafast")
        settings.encoderOptions = ["no-such-option": "1"]
        try writer.add(AssetWriterInput(outputSettings: settings))
        XCTAssertThrowsError(try writer.startWriting())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["kept.mp4"], "no partial file is left")
        XCTAssertEqual(try Data(contentsOf: url), Data("old".utf8))
    }
}
