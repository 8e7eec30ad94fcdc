#!/usr/bin/env python3
"""Instruction counts (callgrind) of the native writer's append path, and of `convert`, for two builds.

Issue 39 asks that Apple's spellings cost nothing on the native path. This measures two
checkouts in one run (each built with `swift build -c release --static-swift-stdlib` for the
products swift-record and AppendBench):

- `append`: bench/AppendBench appends 1280x720 pictures through AssetWriter, AssetWriterInput
  and PixelBufferAdaptor (declared for the same format and size), H.264 ultrafast, one thread.
  It runs with `--short` and `--long` frames; per frame is (long − short) / (long − short
  frames), so start-up and finishing cancel out: all instructions, those outside
  x264_encoder_encode (ours, FFmpeg's wrapper, the muxer) and the adaptor's append call on
  the caller's thread (inclusive; its binary keeps its symbol table for callgrind_annotate). Formats: yuv420p (the encoder's own: no copy)
  and bgra (converted by the adaptor).
- `frame` and `encode`: bench/instructions.py's cases (one and 60 1280x720 frames converted),
  run with --binary and --no-build, and per frame their difference over 59 (start-up cancelled).

Uses bench/instructions.py's callgrind runner, stripping and BLAS choice. Every count is taken
`--rounds` times; the table shows medians with min–max. Prints Markdown; --json keeps the counts.

usage: bench/append_cost.py --before DIR --after DIR [--rounds N] [--short N] [--long N]
                            [--formats yuv420p,bgra] [--convert] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions  # noqa: E402  (bench/instructions.py: callgrind, reference_blas, ENV)


def stripped(path, work, name, debug_only=False):
    """A copy without DWARF (valgrind 3.19 cannot read the Swift binary's); `debug_only` keeps
    the symbol table, so callgrind_annotate names Swift's functions."""
    out = os.path.join(work, name)
    subprocess.run(["strip"] + (["--strip-debug"] if debug_only else []) + ["-o", out, path], check=True)
    return out


# Inclusive counts read from callgrind's output: the adaptor's (synchronous) append on the
# caller's thread, and the encoder, so that what is not x264 can be told apart.
PARTS = {"adaptor": "PixelBufferAdaptorC6append_20withPresentationTime", "x264": "???:x264_encoder_encode "}


def parts(out):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in text.splitlines():
        for key, needle in PARTS.items():
            if needle in line and "YaK" not in line:  # not the async append
                found[key] = max(found.get(key, 0), int(line.split()[0].replace(",", "")))
    return found


def spread(values, unit=1e6, suffix=" M", digits=1):
    f = lambda v: "%.*f%s" % (digits, v / unit, suffix)
    return "%s (%s–%s)" % (f(statistics.median(values)), f(min(values)), f(max(values)))


def per_frame(binary, fmt, short, long, rounds, work):
    """Per frame, one value a round: all instructions, those outside x264_encoder_encode, and
    the adaptor's append on the caller's thread."""
    values = {"total": [], "outside x264": [], "adaptor append": []}
    for r in range(rounds):
        counts = []
        for frames in (short, long):
            out = os.path.join(work, "callgrind.%s.%d.%d" % (os.path.basename(binary), frames, r))
            total = instructions.callgrind([binary, fmt, str(frames)], annotate=out, cwd=work)
            counts.append((total, parts(out)))
        (t0, p0), (t1, p1) = counts
        n = long - short
        values["total"].append((t1 - t0) / n)
        values["outside x264"].append(((t1 - p1.get("x264", 0)) - (t0 - p0.get("x264", 0))) / n)
        values["adaptor append"].append((p1.get("adaptor", 0) - p0.get("adaptor", 0)) / n)
    return values


def convert_cases(binary, rounds, work, name):
    out = os.path.join(work, name + ".md")
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "instructions.py"), "--no-build",
                        "--binary", binary, "--cases", "frame,encode", "--rounds", str(rounds), "--output", out], stdout=subprocess.DEVNULL)
    if p.returncode not in (0, 1):  # 1: one of issue 38's targets is not met, not this script's question
        sys.exit("bench/instructions.py failed (%d) for %s" % (p.returncode, binary))
    with open(os.path.splitext(out)[0] + ".json") as f:
        return json.load(f)["cases"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="checkout whose .build/release holds swift-record and AppendBench")
    ap.add_argument("--after", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--short", type=int, default=10)
    ap.add_argument("--long", type=int, default=70)
    ap.add_argument("--formats", default="yuv420p,bgra")
    ap.add_argument("--convert", action="store_true", help="also instructions.py's frame and encode cases")
    ap.add_argument("--json", help="write the counts here")
    args = ap.parse_args()
    if instructions.reference_blas():
        instructions.ENV["LD_LIBRARY_PATH"] = ":".join(instructions.reference_blas())
    work = tempfile.mkdtemp(prefix="swift-record-append-cost-")
    data = {"short": args.short, "long": args.long, "rounds": args.rounds, "append": {}, "convert": {}}
    try:
        for side in ("before", "after"):
            release = os.path.join(getattr(args, side), ".build", "release")
            bench = stripped(os.path.join(release, "AppendBench"), work, "AppendBench-" + side, debug_only=True)
            for fmt in [f for f in args.formats.split(",") if f]:
                values = per_frame(bench, fmt, args.short, args.long, args.rounds, work)
                data["append"].setdefault(fmt, {})[side] = values
                for what, v in values.items():
                    print("append %-8s %-15s %-6s %s" % (fmt, what, side, spread(v, 1e3, " k")), file=sys.stderr)
            if args.convert:
                cases = convert_cases(os.path.join(release, "swift-record"), args.rounds, work, "convert-" + side)
                # Per frame, start-up cancelled: (60 frames − 1 frame) / 59, round by round.
                cases["per frame"] = {"ours": [(e - f) / 59 for e, f in zip(cases["encode"]["ours"], cases["frame"]["ours"])]}
                for case, c in cases.items():
                    data["convert"].setdefault(case, {})[side] = c["ours"]
                    print("%-15s %-6s %s" % (case, side, spread(c["ours"])), file=sys.stderr)
        lines = ["| measure | before | after | after / before (medians) | worst (max after / min before) |", "|---|---|---|---|---|"]
        for fmt, sides in data["append"].items():
            for what in sides["before"]:
                b, a = sides["before"][what], sides["after"][what]
                lines.append("| append %s, per frame: %s | %s | %s | %.4f | %.4f |" % (fmt, what, spread(b, 1e3, " k"), spread(a, 1e3, " k"),
                                                                                     statistics.median(a) / statistics.median(b), max(a) / min(b)))
        for case, sides in data["convert"].items():
            b, a = sides["before"], sides["after"]
            name = "convert, per frame ((`encode` − `frame`) / 59)" if case == "per frame" else "convert `%s`" % case
            lines.append("| %s | %s | %s | %.4f | %.4f |" % (name, spread(b, 1e6, " M", 3 if case == "per frame" else 1), spread(a, 1e6, " M", 3 if case == "per frame" else 1),
                                                         statistics.median(a) / statistics.median(b), max(a) / min(b)))
        print("\n".join(lines))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(data, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
