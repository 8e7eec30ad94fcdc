#!/usr/bin/env python3
"""Fails when an AVFrame or AVPacket is allocated or freed outside its one Swift owner.

Usage: check-c-owners.py [--self-test] [ROOT]

`av_frame_alloc`, `av_frame_clone` and `av_frame_free` may appear only in the file of
`Frame`, and `av_packet_alloc`, `av_packet_clone` and `av_packet_free` only in the file of
`Packet` (OWNERS below): everywhere else a frame or a packet is one of those objects, freed
when its last reference goes. Every Swift file under ROOT/Sources (the repository's by
default) is read with its comments and string literals left out; each call found elsewhere
is printed as `path:line: name (owned by ...)` and the exit status is 1.

--self-test first shows the check can fail: it copies Sources to a temporary folder, plants
a call in a file that owns nothing and expects exactly that file and line to be named (and
the check to fail), and a mention in a comment or a string not to be; then it checks the real tree. `make
test` runs it that way.
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


def blank(match):
    """The match with everything but its line breaks made spaces, so line numbers stay."""
    return re.sub(r"[^\n]", " ", match.group(0))


def strip(text):
    """Removes comments and string literals (multi-line ones included), keeping lines."""
    text = re.sub(r'"""[\s\S]*?"""', blank, text)
    text = re.sub(r"/\*[\s\S]*?\*/", blank, text)
    text = re.sub(r"//[^\n]*", blank, text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', blank, text)


def violations(root):
    """(relative path, line, function) of every call outside its owner's file under root."""
    found = []
    sources = os.path.join(root, "Sources")
    for dirpath, dirnames, names in os.walk(sources):
        dirnames.sort()
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(dirpath, name)
            relative = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                text = strip(f.read())
            for number, line in enumerate(text.split("\n"), start=1):
                for function in CALL.findall(line):
                    if relative != OWNERS[function]:
                        found.append((relative, number, function))
    return found


def check(root):
    missing = sorted({owner for owner in OWNERS.values() if not os.path.isfile(os.path.join(root, owner))})
    for owner in missing:
        print(f"check-c-owners: the owner's file {owner} is missing")
    found = violations(root)
    for relative, number, function in found:
        print(f"{relative}:{number}: {function} outside its owner (only {OWNERS[function]} may call it)")
    if missing or found:
        return 1
    print(f"check-c-owners: AVFrame and AVPacket are allocated and freed only in {FRAME_OWNER} and {PACKET_OWNER}")
    return 0


def self_test():
    """Plants a violation in a copy of Sources and expects it named; 0 when the check works."""
    with tempfile.TemporaryDirectory(prefix="check-c-owners-") as temporary:
        shutil.copytree(os.path.join(REPOSITORY, "Sources"), os.path.join(temporary, "Sources"))
        target = "Sources/SwiftRecordBase/Lock.swift"
        path = os.path.join(temporary, target)
        before = violations(temporary)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        # A mention in a comment and in a string is no call: the copy must still pass.
        lines.append("// av_frame_free(&frame) in a comment")
        lines.append('let planted = "av_packet_alloc()"')
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        if violations(temporary) != before:
            print("check-c-owners --self-test: a mention in a comment or a string was taken for a call")
            return 1
        lines.append("func planted() { var p = av_packet_alloc(); av_packet_free(&p) }")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        expected = [(target, len(lines), "av_packet_alloc"), (target, len(lines), "av_packet_free")]
        found = [v for v in violations(temporary) if v not in before]
        if found != expected:
            print(f"check-c-owners --self-test: planted {expected}, found {found}")
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
    print(f"check-c-owners --self-test: a call planted in {target} is named and fails the check")
    return 0


def main():
    arguments = [a for a in sys.argv[1:] if a != "--self-test"]
    root = os.path.abspath(arguments[0]) if arguments else REPOSITORY
    if "--self-test" in sys.argv and self_test() != 0:
        return 1
    return check(root)


if __name__ == "__main__":
    sys.exit(main())
