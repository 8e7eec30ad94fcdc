#!/usr/bin/env python3
"""Fails when an AVFrame or AVPacket is allocated or freed outside its one Swift owner, or
when FFmpeg is imported outside the folders that own C objects.

Usage: check-c-owners.py [--self-test] [ROOT]

`av_frame_alloc`, `av_frame_clone` and `av_frame_free` may appear only in the file of
`Frame`, and `av_packet_alloc`, `av_packet_clone` and `av_packet_free` only in the file of
`Packet` (OWNERS below): everywhere else a frame or a packet is one of those objects, freed
when its last reference goes. And `import CFFmpeg` (in any form: `internal import`,
`@_implementationOnly import`, `import struct CFFmpeg.AVFrame`) may appear only in the
folders of C_FOLDERS below, the ones that own FFmpeg objects: the others (Pipeline/,
Writer/, Timeline/, …) call their Swift API. A folder on that list that no longer imports
CFFmpeg fails too, so the list stays the truth. Every Swift file under ROOT/Sources (the
repository's by default) is read with its comments and string literals left out; each
call or import found elsewhere is printed as `path:line: ...` and the exit status is 1.

--self-test first shows the check can fail: it copies Sources to a temporary folder, plants
a call and an import in a file of a folder that owns nothing and expects exactly that file
and those lines to be named (and the check to fail), and a mention in a comment or a string
not to be; then it checks the real tree. `make test` runs it that way.
"""
import os
import re
import shutil
import sys
import tempfile

REPOSITORY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# Function -> the one file (relative to the repository) that may call it.
FRAME_OWNER = "Sources/SwiftRecord/Support/Frame.swift"
PACKET_OWNER = "Sources/SwiftRecord/Support/Packet.swift"
OWNERS = {
    "av_frame_alloc": FRAME_OWNER, "av_frame_clone": FRAME_OWNER, "av_frame_free": FRAME_OWNER,
    "av_packet_alloc": PACKET_OWNER, "av_packet_clone": PACKET_OWNER, "av_packet_free": PACKET_OWNER,
}
CALL = re.compile(r"\b(" + "|".join(sorted(OWNERS)) + r")\b")
# The folders (relative to Sources) that may import CFFmpeg: each owns FFmpeg objects (see
# docs/ARCHITECTURE.md, "One owner per C object") or converts FFmpeg's descriptions.
C_FOLDERS = {
    "SwiftRecord/Support": "Frame, Packet; FFmpeg's errors, log and version",
    "SwiftRecord/Formats": "FormatDescription (AVCodecParameters); pixel formats, channel layouts, time bases",
    "SwiftRecord/Buffers": "PixelBuffer (its Frame), PacketStorage (a Packet)",
    "SwiftRecord/PixelConversion": "ScaleContext (SwsContext)",
    "SwiftRecord/Encoding": "CodecContext, EncoderContext, TrackEncoder, Resampler, AudioLane (AVAudioFifo)",
    "SwiftRecord/Muxing": "Muxer, Demuxer (AVFormatContext), SegmentOutput (AVIOContext)",
    "SwiftRecord/Live": "LiveConnection (its Muxer's interrupt callback), HLSWriter (AVIOContext), EncodedPacket",
    "SwiftRecord/Reading": "the readers' decoders, ImageEncoder, SubtitleTranscoder",
    "SwiftRecord/Cameras": "JPEGPictureDecoder (a decoder, a packet, a frame)",
    "SwiftRecord/Editing": "ClipCopier, SmartCutHead (packets, an encoder)",
}
IMPORT = re.compile(r"^[ \t]*(?:@\w+[ \t]+)*(?:(?:public|package|internal|fileprivate|private)[ \t]+)?import[ \t]+"
                    r"(?:(?:struct|class|enum|protocol|typealias|func|var|let)[ \t]+)?CFFmpeg\b", re.M)


def blank(match):
    """The match with everything but its line breaks made spaces, so line numbers stay."""
    return re.sub(r"[^\n]", " ", match.group(0))


def strip(text):
    """Removes comments and string literals (multi-line ones included), keeping lines."""
    text = re.sub(r'"""[\s\S]*?"""', blank, text)
    text = re.sub(r"/\*[\s\S]*?\*/", blank, text)
    text = re.sub(r"//[^\n]*", blank, text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', blank, text)


def swift_files(root):
    """(path relative to root, path relative to root/Sources, text without comments and
    strings) of every Swift file under root/Sources, in a stable order."""
    sources = os.path.join(root, "Sources")
    for dirpath, dirnames, names in os.walk(sources):
        dirnames.sort()
        for name in sorted(names):
            if name.endswith(".swift"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, root), os.path.relpath(path, sources), strip(f.read())


def violations(root):
    """(relative path, line, function) of every call outside its owner's file under root."""
    found = []
    for relative, _, text in swift_files(root):
        for number, line in enumerate(text.split("\n"), start=1):
            for function in CALL.findall(line):
                if relative != OWNERS[function]:
                    found.append((relative, number, function))
    return found


def imports(root):
    """(relative path, line) of every `import CFFmpeg` outside C_FOLDERS under root, and the
    folders of C_FOLDERS none of whose files imports it."""
    found, importing = [], set()
    for relative, inside, text in swift_files(root):
        folder = next((f for f in C_FOLDERS if inside.startswith(f + os.sep)), None)
        for match in IMPORT.finditer(text):
            if folder:
                importing.add(folder)
            else:
                found.append((relative, text.count("\n", 0, match.start()) + 1))
    return found, sorted(set(C_FOLDERS) - importing)


def check(root):
    missing = sorted({owner for owner in OWNERS.values() if not os.path.isfile(os.path.join(root, owner))})
    for owner in missing:
        print(f"check-c-owners: the owner's file {owner} is missing")
    found = violations(root)
    for relative, number, function in found:
        print(f"{relative}:{number}: {function} outside its owner (only {OWNERS[function]} may call it)")
    imported, unused = imports(root)
    for relative, number in imported:
        print(f"{relative}:{number}: imports CFFmpeg, but its folder owns no FFmpeg object (call its owners' Swift API, "
              f"or add the folder to C_FOLDERS in scripts/check-c-owners.py with what it owns)")
    for folder in unused:
        print(f"check-c-owners: Sources/{folder} is on the list of folders that import CFFmpeg, but none of its files does "
              f"(take it off C_FOLDERS)")
    if missing or found or imported or unused:
        return 1
    print(f"check-c-owners: AVFrame and AVPacket are allocated and freed only in {FRAME_OWNER} and {PACKET_OWNER}; "
          f"CFFmpeg is imported only in {', '.join(sorted(f.split('/', 1)[1] + '/' for f in C_FOLDERS))}")
    return 0


def self_test():
    """Plants a violation in a copy of Sources and expects it named; 0 when the check works."""
    with tempfile.TemporaryDirectory(prefix="check-c-owners-") as temporary:
        shutil.copytree(os.path.join(REPOSITORY, "Sources"), os.path.join(temporary, "Sources"))
        # A folder that owns nothing (Time/ has no FFmpeg object) gets the planted lines.
        target = "Sources/SwiftRecord/Time/MediaTime.swift"
        path = os.path.join(temporary, target)
        before, imports_before = violations(temporary), imports(temporary)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        # A mention in a comment and in a string is no call and no import: the copy must still pass.
        lines.append("// av_frame_free(&frame) in a comment, and: internal import CFFmpeg")
        lines.append('let planted = "av_packet_alloc()"')
        lines += ['let plantedImport = """', "import CFFmpeg", '"""']
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        if violations(temporary) != before or imports(temporary) != imports_before:
            print("check-c-owners --self-test: a mention in a comment or a string was taken for a call or an import")
            return 1
        lines.append("func planted() { var p = av_packet_alloc(); av_packet_free(&p) }")
        lines.append("@_implementationOnly internal import CFFmpeg")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        expected = [(target, len(lines) - 1, "av_packet_alloc"), (target, len(lines) - 1, "av_packet_free")]
        found = [v for v in violations(temporary) if v not in before]
        if found != expected:
            print(f"check-c-owners --self-test: planted {expected}, found {found}")
            return 1
        found_imports = [v for v in imports(temporary)[0] if v not in imports_before[0]]
        if found_imports != [(target, len(lines))]:
            print(f"check-c-owners --self-test: planted an import at {target}:{len(lines)}, found {found_imports}")
            return 1
        # A folder on the list whose files no longer import CFFmpeg is named too.
        camera = os.path.join(temporary, "Sources/SwiftRecord/Cameras/JPEGPictureDecoder.swift")
        with open(camera, encoding="utf-8") as f:
            text = f.read()
        with open(camera, "w", encoding="utf-8") as f:
            f.write(IMPORT.sub("", text))
        if imports(temporary)[1] != ["SwiftRecord/Cameras"]:
            print(f"check-c-owners --self-test: Cameras/ without its import, unused folders found: {imports(temporary)[1]}")
            return 1
        # The real check's exit status on the planted tree.
        saved = sys.stdout
        sys.stdout = open(os.devnull, "w")
        try:
            status = check(temporary)
        finally:
            sys.stdout.close()
            sys.stdout = saved
        if status != 1:
            print("check-c-owners --self-test: the planted call did not fail the check")
            return 1
    print(f"check-c-owners --self-test: a call and an import planted in {target} are named and fail the check")
    return 0


def main():
    arguments = [a for a in sys.argv[1:] if a != "--self-test"]
    root = os.path.abspath(arguments[0]) if arguments else REPOSITORY
    if "--self-test" in sys.argv and self_test() != 0:
        return 1
    return check(root)


if __name__ == "__main__":
    sys.exit(main())
