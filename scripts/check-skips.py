#!/usr/bin/env python3
"""Fails when an entry of the Makefile's sanitizer skip lists names no test class or test.

Usage: check-skips.py  (after `swift build --build-tests`; make test runs it)

check-sanitizers leaves tests out by class (SANITIZER_SKIP, ARGUMENT_SKIP, TSAN_SKIP): each
entry is `Class` (every test of the class) or `Class/testName` (one test of it), which the
Makefile's `skips` function turns into an anchored `--skip` pattern ('\\.Class/' or
'\\.Class/testName$', as swift test matches 'Target.Class/testName'). A class or test renamed
or removed would silently stop being skipped, or a skip would keep a test's replacement out
unnoticed: each entry must name a class, or a test of that class, that `swift test list` lists.
"""
import os
import re
import subprocess
import sys

makefile = open("Makefile", encoding="utf-8").read().replace("\\\n", " ")
entries = []
for name in ("SANITIZER_SKIP", "ARGUMENT_SKIP", "TSAN_SKIP"):
    m = re.search(r"^" + name + r"\s*:=(.*)$", makefile, re.M)
    if not m:
        sys.exit("check-skips: the Makefile has no " + name)
    words = m.group(1).split()
    if not words:
        sys.exit("check-skips: %s is empty" % name)
    entries += [(name, w) for w in words]
tests = subprocess.run([os.environ.get("SWIFT", "swift"), "test", "list", "--skip-build"], check=True, capture_output=True, text=True).stdout.split()
if len(tests) < 10:
    sys.exit("check-skips: swift test list found %d tests; build the tests first" % len(tests))
classes, names = set(), set()
for t in tests:
    m = re.fullmatch(r"\w+\.(\w+)/(\w+)", t)
    if m:
        classes.add(m.group(1))
        names.add(m.group(1) + "/" + m.group(2))
problems = []
for listname, entry in entries:
    if not re.fullmatch(r"\w+(/\w+)?", entry):
        problems.append("%s: %s is neither Class nor Class/testName" % (listname, entry))
    elif entry not in (names if "/" in entry else classes):
        problems.append("%s: %s names no %s (renamed or removed?)" % (listname, entry, "test" if "/" in entry else "test class"))
if problems:
    sys.exit("check-skips: " + "; ".join(problems))
print("check-skips: %d skips, each names a test class or a test of one" % len(entries))
