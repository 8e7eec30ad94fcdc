import Foundation
import TestSupport
import XCTest

// One program's sound (`--audio app:NAME`, issue 28), through a private PulseAudio server:
// two players (pacat with application.name Alpha at 440 Hz and Beta at 1000 Hz) play into
// the same sink `test`.
//  - testOnlyTheProgramsOwnSoundIsRecordedAndItsNewStreamIsFollowed: `--audio app:Alpha`
//    holds 440 Hz and none of 1000 Hz (Goertzel shares over 50-ms windows), and when Alpha
//    closes its stream and opens a new one mid-recording the new one is recorded too.
//  - testAProgramNotPlayingYetIsWaitedFor: Alpha starts 1.5 s into the recording: silence
//    before, its tone after, announced as waiting; `--list-audio-devices` lists the
//    programs playing.
//  - testTheTrackIsTitledWithTheProgramsName (issue 37, 20): `app:PID` and `app:ALPHA`
//    (another case) title the track "Alpha", as the server names the program.
final class PulseApplicationTests: PulseCLITestCase {
    private func play(_ application: String, frequency: Double) throws -> ChildProcess {
        let tone = dir.appendingPathComponent("tone-\(Int(frequency)).raw").path
        if !FileManager.default.fileExists(atPath: tone) { try writeTone(to: tone, seconds: 30, frequency: frequency) }
        let player = try Proc.spawn("pacat", ["--playback", "--device=test", "--format=s16le", "--rate=48000", "--channels=2",
                                              "--latency-msec=20", "--client-name=\(application)",
                                              "--property=application.name=\(application)"],
                                    stdinPath: tone, environment: server.environment)
        track(player)
        return player
    }

    private func share(_ samples: ArraySlice<Float>, _ frequency: Double) -> Double {
        AudioCheck.medianToneShare(samples, frequency: frequency)
    }

    private func second(_ pcm: [Float], at t: Double) -> ArraySlice<Float> {
        let start = min(pcm.count, Int(t * 48_000)), end = min(pcm.count, start + 48_000)
        return pcm[start..<end]
    }

    func testOnlyTheProgramsOwnSoundIsRecordedAndItsNewStreamIsFollowed() throws {
        var alpha = try play("Alpha", frequency: 440)
        _ = try play("Beta", frequency: 1000)
        Thread.sleep(forTimeInterval: 1)
        let out = dir.appendingPathComponent("app.mp4").path, log = dir.appendingPathComponent("app.csv").path
        let child = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "6",
                               "--audio", "app:Alpha", "--timing-log", log, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(60, in: log, timeout: 30), "the recording never reached 2 s")
        // Alpha closes its stream and opens another (a player's next track).
        alpha.terminate()
        alpha = try play("Alpha", frequency: 440)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("the sound of 'Alpha' alone"), r.stderr)
        let pcm = try AudioCheck.decode(out)
        XCTAssertEqual(Double(pcm.count) / 48_000, 6, accuracy: 1024.0 / 48_000 + 0.001)
        let before = second(pcm, at: 0.8), after = second(pcm, at: 4.5)
        XCTAssertGreaterThan(share(before, 440), 0.8, "Alpha's tone")
        XCTAssertLessThan(share(before, 1000), 0.01, "none of Beta's")
        XCTAssertGreaterThan(share(after, 440), 0.8, "Alpha's new stream was followed")
        XCTAssertLessThan(share(after, 1000), 0.01, "still none of Beta's")
        _ = alpha
    }

    func testTheTrackIsTitledWithTheProgramsName() throws {
        let alpha = try play("Alpha", frequency: 440)
        Thread.sleep(forTimeInterval: 0.5)
        for (i, name) in ["\(alpha.pid)", "ALPHA"].enumerated() {
            let out = dir.appendingPathComponent("title-\(i).mkv").path
            let r = try spawn(["--source", "synthetic", "--size", "160x96", "--realtime", "--duration", "1",
                               "--audio", "app:\(name)", "-o", out]).wait(timeout: 60)
            XCTAssertEqual(r.status, 0, r.stderr)
            let tags = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream_tags=title", "-of", "csv=p=0", out])
            XCTAssertEqual(tags.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "Alpha", "app:\(name)")
        }
    }

    func testAProgramNotPlayingYetIsWaitedFor() throws {
        _ = try play("Beta", frequency: 1000)
        Thread.sleep(forTimeInterval: 0.5)
        let list = try spawn(["--list-audio-devices"]).wait(timeout: 30)
        XCTAssertTrue(list.stdout.contains("app:Beta"), list.stdout)
        let out = dir.appendingPathComponent("wait.mkv").path, log = dir.appendingPathComponent("wait.csv").path
        let child = try spawn(["--source", "synthetic", "--size", "320x240", "--realtime", "--duration", "5",
                               "--audio", "app:Alpha", "--timing-log", log, "-o", out])
        XCTAssertNotNil(TimingLogFile.waitForFrame(45, in: log, timeout: 30), "the recording never reached 1.5 s")
        _ = try play("Alpha", frequency: 440)
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("not playing yet"), r.stderr)
        let pcm = try AudioCheck.decode(out)
        XCTAssertLessThan(AudioCheck.rms(second(pcm, at: 0.2)), 0.001, "silence before Alpha plays")
        XCTAssertGreaterThan(share(second(pcm, at: 3.5), 440), 0.8, "Alpha's tone once it plays")
        XCTAssertLessThan(share(second(pcm, at: 3.5), 1000), 0.01, "none of Beta's")
    }
}
