import Foundation
import TestSupport
import XCTest

/// The first ten minutes (issue 43): the man page and the completions are generated from the
/// argument definitions and installed where distributions look for them.
/// - testManPageRendersAndListsEveryOption: groff and man render it without a warning; every
///   option each subcommand's --help lists is on the page.
/// - testCompletionScriptsLoad: bash -n, zsh -n, fish -n.
/// - testBashCompletesOptionsAndValues: `complete -p swift-record`; --sou → --source (record is
///   the default subcommand), --codec → the codecs, convert --pre → --preset, --preset ve →
///   veryfast veryslow, --audio → the kinds.
/// - testMakeInstallLaysOutAndUninstallRemovesExactlyThat: make install DESTDIR PREFIX=/usr
///   lays out the binary, share/man/man1/swift-record.1 and the three completions, nothing
///   else; make uninstall removes exactly those and leaves a file of someone else's.
final class InstallTests: CLITestCase {
    static let subcommands = ["record", "convert", "trim", "join", "thumbnail", "screenshot", "verify", "repair"]

    func script(_ name: String) -> String { PackagePaths.root.appendingPathComponent("scripts/\(name)").path }

    func makeManPage() throws -> String {
        let page = dir.appendingPathComponent("swift-record.1").path
        let r = try Proc.run("python3", [script("make-manpage.py"), binary, page])
        XCTAssertTrue(r.succeeded, r.stderr)
        return page
    }

    func makeCompletions() throws -> URL {
        let out = dir.appendingPathComponent("completions")
        let r = try Proc.run("python3", [script("make-completions.py"), binary, out.path])
        XCTAssertTrue(r.succeeded, r.stderr)
        return out
    }

    func testManPageRendersAndListsEveryOption() throws {
        let page = try makeManPage()
        let groff = try Proc.run("groff", ["-man", "-ww", "-z", page])
        XCTAssertTrue(groff.succeeded && groff.stderr.isEmpty, groff.stderr)
        let man = try Proc.run("man", ["--warnings", "-l", page], environment: ["MANWIDTH": "80", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"])
        XCTAssertTrue(man.succeeded && man.stderr.isEmpty, man.stderr)
        let source = try String(contentsOfFile: page, encoding: .utf8)
        let optionLine = try NSRegularExpression(pattern: #"^\s+(?:-[A-Za-z], )?(--[a-z0-9-]+)"#, options: .anchorsMatchLines)
        for sub in InstallTests.subcommands {
            let help = try Proc.run(binary, [sub, "--help"]).stdout
            let options = optionLine.matches(in: help, range: NSRange(help.startIndex..., in: help)).compactMap { m in
                Range(m.range(at: 1), in: help).map { String(help[$0]) }
            }
            XCTAssertGreaterThan(options.count, 2, "\(sub) --help: \(help)")
            for option in options {
                XCTAssertTrue(source.contains("\\fB" + option.replacingOccurrences(of: "-", with: "\\-") + "\\fR"), "\(sub): \(option) is not on the man page")
            }
        }
        XCTAssertTrue(man.stdout.contains("SWIFT-RECORD CONVERT"), "a section per subcommand")
    }

    func testCompletionScriptsLoad() throws {
        let scripts = try makeCompletions()
        for (shell, file) in [("bash", "swift-record.bash"), ("zsh", "_swift-record"), ("fish", "swift-record.fish")] {
            let r = try Proc.run("/usr/bin/env", [shell, "-n", scripts.appendingPathComponent(file).path])
            XCTAssertTrue(r.succeeded && r.stderr.isEmpty, "\(shell): \(r.stderr)")
        }
    }

    /// What bash offers for `line` (the cursor at its end), the binary found on PATH.
    func complete(_ line: String, scripts: URL) throws -> [String] {
        let harness = """
        source "$1"; line="$2"
        complete -p swift-record >&2
        read -ra COMP_WORDS <<< "$line"; [[ "$line" == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$line"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
        _swift-record swift-record "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let path = URL(fileURLWithPath: binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let r = try Proc.run("/bin/bash", ["-c", harness, "bash", scripts.appendingPathComponent("swift-record.bash").path, line],
                             environment: ["PATH": path, "PULSE_SERVER": "unix:" + dir.appendingPathComponent("none").path])
        XCTAssertTrue(r.succeeded, r.stderr)
        XCTAssertTrue(r.stderr.contains("-F _swift-record swift-record"), r.stderr)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func testBashCompletesOptionsAndValues() throws {
        let scripts = try makeCompletions()
        XCTAssertEqual(try complete("swift-record --sou", scripts: scripts), ["--source"])
        XCTAssertEqual(try complete("swift-record -o x.mp4 --sou", scripts: scripts), ["--source"])
        XCTAssertEqual(try complete("swift-record --codec ", scripts: scripts), ["h264", "hevc", "vp9", "av1", "ffv1"])
        XCTAssertEqual(try complete("swift-record convert --codec ", scripts: scripts), ["h264", "hevc", "vp9", "av1", "ffv1"])
        XCTAssertEqual(try complete("swift-record con", scripts: scripts), ["convert"])
        XCTAssertEqual(try complete("swift-record convert --pre", scripts: scripts), ["--preset"])
        XCTAssertEqual(try complete("swift-record --preset ve", scripts: scripts), ["veryfast", "veryslow"])
        XCTAssertEqual(try complete("swift-record --source ", scripts: scripts), ["x11", "wayland", "synthetic", "camera", "camera:", "yuv:", "pipewire:"])
        XCTAssertEqual(try complete("swift-record --audio ", scripts: scripts), ["default", "none", "synthetic", "pulse", "wav:"])
    }

    func testMakeInstallLaysOutAndUninstallRemovesExactlyThat() throws {
        let root = dir.appendingPathComponent("root").path, share = dir.appendingPathComponent("share").path
        let make = ["make", "--no-print-directory", "-C", PackagePaths.root.path, "DESTDIR=\(root)", "PREFIX=/usr"]
        let install = try Proc.run("/usr/bin/env", make + ["install", "SKIP_BUILD=1", "BIN=\(binary)", "SHARE=\(share)"], timeout: 120)
        XCTAssertTrue(install.succeeded, install.stderr)
        let expected: Set<String> = ["usr/bin/swift-record", "usr/share/man/man1/swift-record.1",
                                     "usr/share/bash-completion/completions/swift-record",
                                     "usr/share/zsh/site-functions/_swift-record",
                                     "usr/share/fish/vendor_completions.d/swift-record.fish"]
        func files() -> Set<String> {
            Set((FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
            })
        }
        XCTAssertEqual(files(), expected)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: root + "/usr/bin/swift-record"))
        let version = try Proc.run(root + "/usr/bin/swift-record", ["--version"])
        XCTAssertTrue(version.stdout.hasPrefix("swift-record"), version.stdout)
        // Someone else's file beside ours stays.
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: root + "/usr/share/man/man1/other.1"))
        let uninstall = try Proc.run("/usr/bin/env", make + ["uninstall"], timeout: 60)
        XCTAssertTrue(uninstall.succeeded, uninstall.stderr)
        XCTAssertEqual(files(), ["usr/share/man/man1/other.1"])
    }
}
