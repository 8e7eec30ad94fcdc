// Issue 27: damage-driven copying of a screen cast (`--capture damage`, the default), on
// synthetic PipeWire buffers carrying SPA_META_VideoDamage: Mutter 43, the compositor these
// tests run, sends no damage metadata (its recordings, in WaylandRecordingTests, take the
// whole-picture path of the same code).
//
// Catalogue:
// - testDamageMetadataIsReadUpToTheFirstEmptyRegion: sr_pw_damage on a buffer listing 3 regions
//   then zeros → those 3; no metadata → -1; 16 regions with room for 8 → 9 (the whole picture).
// - testDamageGathersOverSupersededPicturesAndFallsBackToWhole: StreamFrames.State: the whole
//   picture before the first copy, then the rectangles of every picture since the last copy in
//   order, the whole again after a picture without metadata or past 64 rectangles.
// - testOnlyDamagedRectanglesAreCopiedAndConverted: a 64x48 BGRx picture, then one with a
//   changed rectangle the damage lists and one it does not: the yuv420p picture equals the
//   conversion of the first picture with only the listed rectangle (widened to even
//   coordinates, 22x12) changed; counted as a partial grab of 264 pixels; no damage → nothing.
// - testDamageIsTranslatedByTheCropAndTheRegion: a 96x64 stream cropped to 64x48 at (16,8) and
//   --region 8,4,32,24: damage at (30,18) of the stream lands at (6,6) of the picture.
// - testCursorMovingOverAStillPictureRestoresWhatWasUnderIt: the metadata cursor drawn at (10,10),
//   then moved to (30,20) with no picture change: the old place shows the screen again, the
//   new one the cursor, as a whole conversion of the same scene.
// - testAPictureSomeoneHoldsIsNeverChanged: the picture delivered first, still held, keeps its
//   bytes when the next damage is converted (the change goes to a fresh pooled picture).
import Foundation
import SwiftRecord
internal import CPipeWire
@testable import SwiftRecordWayland
import XCTest

final class WaylandDamageTests: XCTestCase {
    static let blue: [UInt8] = [0xC0, 0x40, 0x20, 0xFF], green: [UInt8] = [0x30, 0xD0, 0x30, 0xFF], red: [UInt8] = [0x20, 0x20, 0xE0, 0xFF]

    private func planes(_ p: PixelBuffer) -> [[UInt8]] {
        p.withReadAccess { planes in
            planes.map { plane in
                (0..<plane.height).flatMap { y in
                    Array(UnsafeBufferPointer(start: plane.baseAddress.assumingMemoryBound(to: UInt8.self) + y * plane.bytesPerRow, count: plane.rowLength))
                }
            }
        }
    }

    /// `bgra` converted whole by the same SIMD converter the regions go through.
    private func converted(_ bgra: PixelBuffer) throws -> [[UInt8]] {
        let converter = try RegionConverter(width: bgra.width, height: bgra.height, sourceFormat: .bgra, color: .bt709, convertsRegions: true)
        let out = try PixelBuffer(width: bgra.width, height: bgra.height, pixelFormat: .yuv420p)
        try converter.convert([PixelRegion(x: 0, y: 0, width: bgra.width, height: bgra.height)], from: bgra, into: out)
        return planes(out)
    }

    private func damagePictures(width: Int, height: Int) throws -> StreamDamagePictures {
        let screen = try PixelBuffer(width: width, height: height, pixelFormat: .bgra)
        return StreamDamagePictures(pictures: try DamagePicture(screen: screen, color: .bt709, pictureCount: 4, convertsRegions: true))
    }

    func testDamageMetadataIsReadUpToTheFirstEmptyRegion() {
        let b = SyntheticBuffer(width: 64, height: 48, stride: 256, pixel: Self.blue)
        let out = UnsafeMutablePointer<spa_region>.allocate(capacity: 16)
        defer { out.deallocate() }
        XCTAssertEqual(sr_pw_damage(b.buffer, out, 16), -1, "no damage metadata")
        let three = [PixelRegion(x: 1, y: 2, width: 3, height: 4), PixelRegion(x: 10, y: 0, width: 8, height: 8), PixelRegion(x: 0, y: 40, width: 64, height: 8)]
        b.setMetadata(damage: three)
        XCTAssertEqual(sr_pw_damage(b.buffer, out, 16), 3)
        XCTAssertEqual((0..<3).map { PixelRegion(x: Int(out[$0].position.x), y: Int(out[$0].position.y),
                                                 width: Int(out[$0].size.width), height: Int(out[$0].size.height)) }, three)
        b.setMetadata(damage: (0..<16).map { PixelRegion(x: $0, y: 0, width: 1, height: 1) })
        XCTAssertEqual(sr_pw_damage(b.buffer, out, 8), 9, "more than there is room for: the whole picture")
        XCTAssertEqual(sr_pw_damage(b.buffer, out, 16), 16)
    }

    func testDamageGathersOverSupersededPicturesAndFallsBackToWhole() {
        var s = StreamFrames.State()
        XCTAssertNil(s.takeDamage(), "before the first copy: the whole picture")
        XCTAssertEqual(s.takeDamage(), [], "nothing since")
        func regions(_ rects: [PixelRegion]) -> [spa_region] {
            rects.map { spa_region(position: spa_point(x: Int32($0.x), y: Int32($0.y)), size: spa_rectangle(width: UInt32($0.width), height: UInt32($0.height))) }
        }
        let a = [PixelRegion(x: 0, y: 0, width: 2, height: 2)], b = [PixelRegion(x: 8, y: 8, width: 4, height: 2), PixelRegion(x: 20, y: 2, width: 2, height: 2)]
        regions(a).withUnsafeBufferPointer { s.gather(damage: $0) }
        regions(b).withUnsafeBufferPointer { s.gather(damage: $0) }
        XCTAssertEqual(s.takeDamage(), a + b, "every superseded picture's changes, in order")
        regions(a).withUnsafeBufferPointer { s.gather(damage: $0) }
        s.gather(damage: nil)
        regions(b).withUnsafeBufferPointer { s.gather(damage: $0) }
        XCTAssertNil(s.takeDamage(), "a picture without damage metadata: the whole picture")
        let many = regions((0..<40).map { PixelRegion(x: $0, y: 0, width: 1, height: 1) })
        many.withUnsafeBufferPointer { s.gather(damage: $0) }
        many.withUnsafeBufferPointer { s.gather(damage: $0) }
        XCTAssertNil(s.takeDamage(), "80 rectangles: the whole picture")
    }

    func testOnlyDamagedRectanglesAreCopiedAndConverted() throws {
        let format = StreamFormat(width: 64, height: 48, pixelFormat: .bgrx)
        var pictures = try damagePictures(width: 64, height: 48)
        var copier = StreamPictureCopy(), statistics = GrabStatistics()
        let first = SyntheticBuffer(width: 64, height: 48, stride: 288, pixel: Self.blue)
        let (p1, o1) = try XCTUnwrap(pictures.update(first.pw, format: format, region: nil, damage: nil, cursor: nil, copier: &copier, statistics: &statistics))
        XCTAssertEqual(o1, .copied)
        XCTAssertEqual(planes(p1), try converted(first.bgra()))
        XCTAssertEqual(statistics.fullGrabs, 1)

        // The next picture changes two places; its damage lists one (odd corners: widened to 10,20 22x12).
        let second = SyntheticBuffer(width: 64, height: 48, stride: 288, pixel: Self.blue)
        let listed = PixelRegion(x: 11, y: 21, width: 20, height: 10)
        second.fill(listed, with: Self.green)
        second.fill(PixelRegion(x: 40, y: 2, width: 10, height: 10), with: Self.red)
        let (p2, _) = try XCTUnwrap(pictures.update(second.pw, format: format, region: nil, damage: [listed], cursor: nil, copier: &copier, statistics: &statistics))
        let expected = SyntheticBuffer(width: 64, height: 48, stride: 256, pixel: Self.blue)
        expected.fill(listed, with: Self.green)
        XCTAssertEqual(planes(p2), try converted(expected.bgra()), "only the listed rectangle changed")
        XCTAssertNotEqual(planes(p2), try converted(second.bgra()))
        XCTAssertEqual(statistics.partialGrabs, 1)
        XCTAssertEqual(statistics.rectangles, 2)
        XCTAssertEqual(statistics.grabbedPixels, 64 * 48 + 22 * 12)

        XCTAssertNil(try pictures.update(second.pw, format: format, region: nil, damage: [], cursor: nil, copier: &copier, statistics: &statistics),
                     "no damage, no cursor: nothing to do")
        // A picture without damage metadata: all of it again.
        let (p3, _) = try XCTUnwrap(pictures.update(second.pw, format: format, region: nil, damage: nil, cursor: nil, copier: &copier, statistics: &statistics))
        XCTAssertEqual(planes(p3), try converted(second.bgra()))
        XCTAssertEqual(statistics.fullGrabs, 2)
    }

    func testDamageIsTranslatedByTheCropAndTheRegion() throws {
        let format = StreamFormat(width: 96, height: 64, pixelFormat: .bgrx)
        let crop = PixelRegion(x: 16, y: 8, width: 64, height: 48), region = PixelRegion(x: 8, y: 4, width: 32, height: 24)
        var pictures = try damagePictures(width: 32, height: 24)
        var copier = StreamPictureCopy(), statistics = GrabStatistics()
        let first = SyntheticBuffer(width: 96, height: 64, stride: 384, pixel: Self.blue)
        first.setMetadata(damage: nil, cropTo: crop)
        _ = try XCTUnwrap(pictures.update(first.pw, format: format, region: region, damage: nil, cursor: nil, copier: &copier, statistics: &statistics))
        let second = SyntheticBuffer(width: 96, height: 64, stride: 384, pixel: Self.blue)
        second.setMetadata(damage: nil, cropTo: crop)
        let changed = PixelRegion(x: 30, y: 18, width: 4, height: 4)
        second.fill(changed, with: Self.green)
        second.fill(PixelRegion(x: 50, y: 30, width: 2, height: 2), with: Self.red)
        let (p2, _) = try XCTUnwrap(pictures.update(second.pw, format: format, region: region, damage: [changed], cursor: nil, copier: &copier, statistics: &statistics))
        let expected = SyntheticBuffer(width: 32, height: 24, stride: 128, pixel: Self.blue)
        expected.fill(PixelRegion(x: 6, y: 6, width: 4, height: 4), with: Self.green)
        XCTAssertEqual(planes(p2), try converted(expected.bgra()))
        XCTAssertEqual(statistics.grabbedPixels, 32 * 24 + 4 * 4)
    }

    func testCursorMovingOverAStillPictureRestoresWhatWasUnderIt() throws {
        let format = StreamFormat(width: 64, height: 48, pixelFormat: .bgrx)
        var pictures = try damagePictures(width: 64, height: 48)
        var copier = StreamPictureCopy(), statistics = GrabStatistics()
        let screen = SyntheticBuffer(width: 64, height: 48, stride: 256, pixel: Self.blue)
        screen.fill(PixelRegion(x: 8, y: 8, width: 8, height: 8), with: Self.red)
        let white = [UInt8](repeating: 255, count: 4 * 4 * 4)
        let at10 = StreamCursor(x: 10, y: 10, hotX: 0, hotY: 0, width: 4, height: 4, pixels: white)
        var at30 = at10
        (at30.x, at30.y) = (30, 20)
        func scene(_ cursor: StreamCursor) throws -> [[UInt8]] {
            let picture = try screen.bgra()
            cursor.composite(into: picture)
            return try converted(picture)
        }
        let (p1, _) = try XCTUnwrap(pictures.update(screen.pw, format: format, region: nil, damage: nil, cursor: at10, copier: &copier, statistics: &statistics))
        XCTAssertEqual(planes(p1), try scene(at10))
        let (p2, _) = try XCTUnwrap(pictures.update(screen.pw, format: format, region: nil, damage: [], cursor: at30, copier: &copier, statistics: &statistics))
        XCTAssertEqual(planes(p2), try scene(at30), "the red square where the cursor was, the cursor where it is")
        XCTAssertEqual(statistics.partialGrabs, 1)
        XCTAssertEqual(statistics.rectangles, 1 + 2, "the old and the new rectangle")
        XCTAssertNil(try pictures.update(screen.pw, format: format, region: nil, damage: [], cursor: at30, copier: &copier, statistics: &statistics))
    }

    func testAPictureSomeoneHoldsIsNeverChanged() throws {
        let format = StreamFormat(width: 64, height: 48, pixelFormat: .bgrx)
        var pictures = try damagePictures(width: 64, height: 48)
        var copier = StreamPictureCopy(), statistics = GrabStatistics()
        let first = SyntheticBuffer(width: 64, height: 48, stride: 256, pixel: Self.blue)
        let (held, _) = try XCTUnwrap(pictures.update(first.pw, format: format, region: nil, damage: nil, cursor: nil, copier: &copier, statistics: &statistics))
        let before = planes(held)
        let second = SyntheticBuffer(width: 64, height: 48, stride: 256, pixel: Self.green)
        let (next, _) = try XCTUnwrap(pictures.update(second.pw, format: format, region: nil, damage: [PixelRegion(x: 0, y: 0, width: 8, height: 8)],
                                                      cursor: nil, copier: &copier, statistics: &statistics))
        XCTAssertFalse(next === held)
        XCTAssertEqual(planes(held), before, "the held picture kept its bytes")
        XCTAssertNotEqual(planes(next), before)
    }
}
