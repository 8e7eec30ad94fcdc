#!/usr/bin/env python3
"""The groups of test classes that `make test` runs side by side (scripts/test-workers.sh).

Usage: test-groups.py --check          every test class is in exactly one group (make test)
       test-groups.py --workers        make test's workers, one a line: a group, or groups
                                       joined by , that one worker runs one after the other
       test-groups.py --filter GROUP   the `swift test --filter` pattern of GROUP's classes
       test-groups.py --classes GROUP  GROUP's classes, one a line
       (GROUP may be several joined by +: servers+realtime)

The groups are listed in scripts/test-groups.txt, the one place they are kept: `servers`
(real-time runs through private PulseAudio, PipeWire and Mutter sessions and cameras),
`realtime` (the other classes whose time is mostly waiting: real-time recordings, live
outputs, stalls, sleeps) and `cpu` (classes that keep a core busy: encoding, decoding,
conversions, unit tests), and `conversions` (CPU-bound conversions that the servers worker runs
once its own classes are done: `[conversions after servers]`). A class that
is in no group, in both, or a name that is no class, fails the check, so a new class cannot
be forgotten; so does a class that docs/TESTING.md does not name. The check reads `swift
test list` (after `swift build --build-tests`).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "test-groups.txt")
DOC = os.path.join(HERE, "..", "docs", "TESTING.md")
GROUPS = ("servers", "conversions", "realtime", "cpu")


def read():
    """({group: [class, ...]}, {group: the group it runs after}) in the file's order; exits
    on a malformed line."""
    result, after, current = {g: [] for g in GROUPS}, {}, None
    for number, raw in enumerate(open(LIST, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\[(\w+)(?: after (\w+))?\]", line)
        if m:
            for name in m.groups():
                if name is not None and name not in result:
                    sys.exit("test-groups: %s:%d: unknown group %s (expected %s)" % (LIST, number, name, ", ".join(GROUPS)))
            current = m.group(1)
            if m.group(2):
                after[current] = m.group(2)
        elif current and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", line):
            result[current].append(line)
        else:
            sys.exit("test-groups: %s:%d: expected [group], [group after group] or a class name: %s" % (LIST, number, raw.rstrip()))
    return result, after


def groups():
    return read()[0]


def workers():
    """make test's workers: each a list of groups run one after the other; a group runs
    first in its own worker unless it runs after another (one level: no chains)."""
    after = read()[1]
    for group, first in after.items():
        if first in after or first == group:
            sys.exit("test-groups: %s runs after %s, which is not a group that runs first in its worker" % (group, first))
    return [[g] + [h for h in GROUPS if after.get(h) == g] for g in GROUPS if g not in after]


def test_classes():
    """{class: target} of every test `swift test list` names."""
    swift = os.environ.get("SWIFT", "swift")
    out = subprocess.run([swift, "test", "list", "--skip-build"], check=True, capture_output=True, text=True).stdout
    classes = {}
    for test in out.split():
        m = re.fullmatch(r"(\w+)\.(\w+)/\w+", test)
        if m:
            if classes.setdefault(m.group(2), m.group(1)) != m.group(1):
                sys.exit("test-groups: class %s is in two targets (%s, %s): a filter by class would take both"
                         % (m.group(2), classes[m.group(2)], m.group(1)))
    if len(classes) < 10:
        sys.exit("test-groups: swift test list found %d classes; build the tests first" % len(classes))
    return classes


def check():
    listed, classes = groups(), test_classes()
    problems = []
    seen = {}
    for group, names in listed.items():
        for name in names:
            if name in seen:
                problems.append("%s is in %s and in %s" % (name, seen[name], group))
            seen[name] = group
            if name not in classes:
                problems.append("%s (group %s) is no test class (renamed or removed?)" % (name, group))
    doc = open(DOC, encoding="utf-8").read()
    for name in sorted(classes):
        if name not in seen:
            problems.append("%s.%s is in no group: add it to scripts/test-groups.txt" % (classes[name], name))
        if not re.search(r"\b%s\b" % name, doc):
            problems.append("docs/TESTING.md does not name %s" % name)
    if problems:
        sys.exit("test-groups: " + "; ".join(problems))
    print("test-groups: %d classes, each in one group (%s)"
          % (len(classes), ", ".join("%s %d" % (g, len(listed[g])) for g in GROUPS)))


def main():
    if sys.argv[1:] == ["--check"]:
        check()
    elif sys.argv[1:] == ["--workers"]:
        print("\n".join(",".join(w) for w in workers()))
    elif len(sys.argv) == 3 and sys.argv[1] in ("--filter", "--classes") and all(g in GROUPS for g in sys.argv[2].split("+")):
        # GROUP+GROUP: their classes together, the first group's first (one worker for both).
        names = [name for g in sys.argv[2].split("+") for name in groups()[g]]
        if sys.argv[1] == "--classes":
            print("\n".join(names))
        else:
            # swift test matches the pattern against 'Target.Class/test'.
            print(r"\.(%s)/" % "|".join(names))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
