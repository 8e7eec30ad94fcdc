#!/usr/bin/env python3
"""Fails when a --skip of the Makefile's sanitizer lists names no test.

Usage: check-skips.py  (after `swift build --build-tests`; make test runs it)

check-sanitizers leaves tests out by name (SANITIZER_SKIP, ARGUMENT_SKIP, TSAN_SKIP); a
test renamed or removed would silently stop being skipped, or a skip would keep a test's
replacement out unnoticed. Each pattern is matched as swift test matches it (a regular
expression searched in 'Target.Class/testName') against `swift test list`.
"""
import os
import re
import subprocess
import sys

makefile = open("Makefile", encoding="utf-8").read().replace("\\\n", " ")
patterns = []
for name in ("SANITIZER_SKIP", "ARGUMENT_SKIP", "TSAN_SKIP"):
    m = re.search(r"^" + name + r"\s*:=(.*)$", makefile, re.M)
    if not m:
        sys.exit("check-skips: the Makefile has no " + name)
    patterns += re.findall(r"--skip\s+(\S+)", m.group(1))
tests = subprocess.run([os.environ.get("SWIFT", "swift"), "test", "list", "--skip-build"], check=True, capture_output=True, text=True).stdout.split()
if len(tests) < 10:
    sys.exit("check-skips: swift test list found %d tests; build the tests first" % len(tests))
unmatched = [p for p in patterns if not any(re.search(p, t) for t in tests)]
if unmatched:
    sys.exit("check-skips: these Makefile skips name no test (renamed or removed?): " + " ".join(unmatched))
print("check-skips: %d skips, each names a test" % len(patterns))
