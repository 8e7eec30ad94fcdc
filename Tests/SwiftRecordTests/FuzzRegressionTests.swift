import Foundation
import SwiftRecord
import TestSupport
import XCTest

/// Replays every input the fuzzers ever crashed on (fuzz/regressions/) and the seed corpus.
final class FuzzRegressionTests: XCTestCase {
    func inputs(_ target: String) throws -> [(String, Data)] {
        var all: [(String, Data)] = []
        for folder in ["fuzz/regressions/\(target)", "fuzz/corpus/\(target)"] {
            let dir = PackagePaths.root.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] {
                all.append(("\(folder)/\(name)", try Data(contentsOf: dir.appendingPathComponent(name))))
            }
        }
        return all
    }

    func testValueParserRegressions() throws {
        let cases = try inputs("values")
        XCTAssertFalse(cases.isEmpty)
        for (_, data) in cases {
            exerciseValueParsers(String(decoding: data, as: UTF8.self))
        }
        XCTAssertNil(Rational(parsing: "120909791209797.1"), "found by the fuzzer: overflowed before")
    }

    func testY4MHeaderRegressions() throws {
        let cases = try inputs("y4m")
        XCTAssertFalse(cases.isEmpty)
        for (_, data) in cases { exerciseY4MHeaderParser(Array(data)) }
    }

    func testValueParsersOnHostileText() {
        for text in ["2.5\u{301}", "1\u{FE0F}\u{20E3}", "\u{661}", "", " ", "x", "0x0", "-1x5", "1x-5", "99999999999999999999x1", "1e9", "nan", "inf", "0/0", "1/0", "-30",
                     "1000000/1", "2Mb", "2MB", "5sec", "1m30", "1h-5m", "..", "1..5", "9223372036854775807",
                     "9223372036854775807.9", "1,2,3", "1,2,3,4,5", "-1,0,10,10", String(repeating: "9", count: 300)] {
            exerciseValueParsers(text)
        }
    }
}
