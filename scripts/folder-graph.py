#!/usr/bin/env python3
"""The folders of Sources/SwiftRecord as a graph of type references.

A folder depends on another when one of its files names a type (class, struct, enum,
protocol, actor or typealias) declared in the other. Comments and string literals are left
out. Prints each folder's dependencies; with --check, exits 1 when two folders depend on
each other (directly or through a cycle), naming the cycle and the references that make it.
docs/ARCHITECTURE.md keeps the intended order; `make test` runs the check.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "SwiftRecord")
DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "ARCHITECTURE.md")
# A folder's line in the map ("Timeline/    -> Audio, Buffers"), and the lines continuing its
# list (indented less than the descriptions, which start at column 28).
ARROW = re.compile(r"^([A-Z]\w*)/\s*->\s*(.*)$")
MORE = re.compile(r"^ {8,27}[A-Z]\w*(?:, [A-Z]\w*)*,?$")
# Top-level declarations only (at the start of a line, after modifiers): nested types such
# as `State` or `Kind` are named through their outer type.
DECL = re.compile(r"^(?:(?:public|package|internal|fileprivate|private|final|indirect|@\w+)\s+)*"
                  r"(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)", re.M)
WORD = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")


def strip(text):
    """Removes comments and string literals (multi-line ones included)."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return text


def files():
    for folder in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path) or folder.endswith(".docc"):
            continue
        for dirpath, _, names in os.walk(path):
            for name in sorted(names):
                if name.endswith(".swift"):
                    yield folder, os.path.join(dirpath, name)


def graph():
    declared = {}
    sources = []
    for folder, path in files():
        text = strip(open(path, encoding="utf-8").read())
        sources.append((folder, path, text))
        for name in DECL.findall(text):
            declared.setdefault(name, folder)
    edges = defaultdict(lambda: defaultdict(set))
    for folder, path, text in sources:
        for word in set(WORD.findall(text)):
            owner = declared.get(word)
            if owner and owner != folder:
                edges[folder][owner].add(f"{os.path.basename(path)}: {word}")
    folders = sorted({f for f, _ in files()})
    return folders, edges


def cycles(folders, edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in folders:
        if v not in index:
            visit(v)
    return out


def documented():
    """The map's lines: folder -> (first line, line after the list, folders named)."""
    lines = open(DOC, encoding="utf-8").read().split("\n")
    found = {}
    for i, line in enumerate(lines):
        m = ARROW.match(line)
        if not m:
            continue
        text, j = m.group(2), i + 1
        if text.startswith("(nothing)"):
            found[m.group(1)] = (i, j, set())
            continue
        while j < len(lines) and MORE.match(lines[j]):
            text += " " + lines[j].strip()
            j += 1
        names = {n.strip() for n in text.replace("(nothing)", "").split(",") if n.strip()}
        found[m.group(1)] = (i, j, names)
    return lines, found


def check_doc(folders, edges, write):
    """Compares (or, with write, rewrites) the map's arrows with the code's; the differences."""
    lines, found = documented()
    problems = [f"{f}/ is not in docs/ARCHITECTURE.md's folder map" for f in folders if f not in found]
    problems += [f"{f}/ is in the folder map but not in Sources/SwiftRecord" for f in found if f not in folders]
    for f in sorted(found, key=lambda f: -found[f][0]):
        if f not in folders:
            continue
        start, end, names = found[f]
        actual = set(edges[f])
        if names != actual:
            problems.append(f"{f}/: the map says -> {', '.join(sorted(names)) or '(nothing)'}; the code: "
                            f"{', '.join(sorted(actual)) or '(nothing)'}")
            if write:
                tail = lines[start].split("(nothing)", 1)[1].strip() if "(nothing)" in lines[start] else ""
                lines[start:end] = [f"{f + '/':<13}-> {', '.join(sorted(actual)) or '(nothing)'}"] + ([" " * 28 + tail] if tail else [])
    if write:
        open(DOC, "w", encoding="utf-8").write("\n".join(lines))
    return problems


def main():
    folders, edges = graph()
    for f in folders:
        print(f"{f} -> {', '.join(sorted(edges[f])) or '(nothing)'}")
    found = cycles(folders, edges)
    problems = check_doc(folders, edges, "--write" in sys.argv)
    if "--check" in sys.argv and problems and "--write" not in sys.argv:
        print()
        for p in problems:
            print("docs/ARCHITECTURE.md: " + p)
        print("(python3 scripts/folder-graph.py --write rewrites the map's arrows from the code)")
        return 1
    if "--check" in sys.argv and found:
        print()
        for component in found:
            print("folders that depend on each other: " + ", ".join(component))
            for a in component:
                for b in component:
                    if b in edges[a]:
                        refs = sorted(edges[a][b])
                        print(f"  {a} -> {b}: {'; '.join(refs[:6])}{' …' if len(refs) > 6 else ''}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
