#!/usr/bin/env python3
"""Instruction counts (callgrind) of the native writer's append path, and of `convert`, for two builds.

Issue 39 asks that Apple's spellings cost nothing on the native path. This measures two
checkouts in one run (each built with `swift build -c release --static-swift-stdlib` for the
products swift-record and AppendBench):

- `append`: bench/AppendBench appends 1280x720 pictures through AssetWriter, AssetWriterInput
  and PixelBufferAdaptor (declared for the same format and size), H.264 ultrafast, one thread.
  It runs with `--short` and `--long` frames; per frame is (long − short) / (long − short
  frames), so start-up and finishing cancel out. Formats: yuv420p (the encoder's own: no copy)
  and bgra (converted by the adaptor).
- `frame` and `encode`: bench/instructions.py's cases, run with --binary and --no-build.

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


def stripped(path, work, name):
    out = os.path.join(work, name)
    subprocess.run(["strip", "-o", out, path], check=True)
    return out


def spread(values, unit=1e6, suffix=" M", digits=1):
    f = lambda v: "%.*f%s" % (digits, v / unit, suffix)
    return "%s (%s–%s)" % (f(statistics.median(values)), f(min(values)), f(max(values)))


def per_frame(binary, fmt, short, long, rounds, work):
    values = []
    for _ in range(rounds):
        a = instructions.callgrind([binary, fmt, str(short)], cwd=work)
        b = instructions.callgrind([binary, fmt, str(long)], cwd=work)
        values.append((b - a) / (long - short))
    return values


def convert_cases(binary, rounds, work, name):
    out = os.path.join(work, name + ".md")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "instructions.py"), "--no-build",
                    "--binary", binary, "--cases", "frame,encode", "--rounds", str(rounds), "--output", out], check=True,
                   stdout=subprocess.DEVNULL)
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
            bench = stripped(os.path.join(release, "AppendBench"), work, "AppendBench-" + side)
            for fmt in args.formats.split(","):
                values = per_frame(bench, fmt, args.short, args.long, args.rounds, work)
                data["append"].setdefault(fmt, {})[side] = values
                print("append %-8s %-6s %s" % (fmt, side, spread(values)), file=sys.stderr)
            if args.convert:
                cases = convert_cases(os.path.join(release, "swift-record"), args.rounds, work, "convert-" + side)
                for case, c in cases.items():
                    data["convert"].setdefault(case, {})[side] = c["ours"]
                    print("%-15s %-6s %s" % (case, side, spread(c["ours"])), file=sys.stderr)
        lines = ["| measure | before | after | after / before (medians) | worst (max after / min before) |", "|---|---|---|---|---|"]
        for fmt, sides in data["append"].items():
            b, a = sides["before"], sides["after"]
            lines.append("| append, %s, per frame | %s | %s | %.4f | %.4f |" % (fmt, spread(b), spread(a), statistics.median(a) / statistics.median(b), max(a) / min(b)))
        for case, sides in data["convert"].items():
            b, a = sides["before"], sides["after"]
            lines.append("| convert `%s` | %s | %s | %.4f | %.4f |" % (case, spread(b), spread(a), statistics.median(a) / statistics.median(b), max(a) / min(b)))
        print("\n".join(lines))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(data, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
