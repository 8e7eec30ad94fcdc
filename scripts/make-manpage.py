#!/usr/bin/env python3
"""Writes swift-record's man page (roff, section 1) from the argument definitions.

Usage: make-manpage.py BINARY OUTPUT

The page is made from what `BINARY --experimental-dump-help` prints: argument-parser's
description of every subcommand, option, flag and argument, their help, value names,
defaults and choices, which is also what `--help` shows. So the page cannot drift from
`--help`; `make test` checks that it renders without warnings and names every option.
"""
import json
import os
import subprocess
import sys


def roff(text):
    """Text safe in a roff line: backslashes as \\e, hyphens as \\-, other non-ASCII as \\[uXXXX], a leading '.' or "'" escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # Every character past ASCII as groff's own escape, so no input encoding is assumed.
    text = "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)
    lines = []
    for line in text.split("\n"):
        if line.startswith(".") or line.startswith("'"):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def names(arg):
    out = []
    for n in arg.get("names", []):
        prefix = "-" if n["kind"] == "short" else ("-" if n["kind"] == "longWithSingleDash" else "--")
        out.append(prefix + n["name"])
    return out


def option_heading(arg):
    value = arg.get("valueName", "")
    if arg["kind"] == "positional":
        return "\\fI" + roff(value) + "\\fR" + (" ..." if arg.get("isRepeating") else "")
    spelled = ", ".join("\\fB" + roff(n) + "\\fR" for n in names(arg))
    if arg["kind"] == "option":
        spelled += " \\fI" + roff(value) + "\\fR"
    return spelled


def describe(arg):
    text = arg.get("abstract", "")
    if arg.get("discussion"):
        text += "\n" + arg["discussion"]
    extra = []
    if arg.get("allValues"):
        extra.append("Values: " + ", ".join(arg["allValues"]) + ".")
    if arg.get("defaultValue") not in (None, "", "false"):
        extra.append("Default: " + str(arg["defaultValue"]) + ".")
    return roff(" ".join([text] + extra).strip())


def discussion(text):
    """A command's discussion: paragraphs as they are; the EXAMPLES block kept as written."""
    out = []
    for block in text.strip().split("\n\n"):
        if block.startswith("EXAMPLES") or block.startswith("  "):
            out.append(".PP\n.nf\n" + roff(block) + "\n.fi")
        else:
            out.append(".PP\n" + roff(block))
    return "\n".join(out)


def command_section(command, title, describes=True):
    lines = [".SH " + roff(title).upper()]
    if describes and command.get("abstract"):
        lines.append(".PP\n" + roff(command["abstract"]))
    if describes and command.get("discussion"):
        lines.append(discussion(command["discussion"]))
    groups = {}
    order = []
    for arg in command.get("arguments", []):
        if not arg.get("shouldDisplay", True):
            continue
        section = arg.get("sectionTitle") or ("Arguments" if arg["kind"] == "positional" else "Options")
        if section not in groups:
            groups[section] = []
            order.append(section)
        groups[section].append(arg)
    for section in order:
        lines.append(".SS " + roff(section))
        for arg in groups[section]:
            lines.append(".TP\n" + option_heading(arg) + "\n" + describe(arg))
    return "\n".join(lines)


def main():
    binary, output = sys.argv[1], sys.argv[2]
    dump = subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout
    tool = json.loads(dump)["command"]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip() or "swift-record"
    subcommands = [c for c in tool.get("subcommands", []) if c.get("shouldDisplay", True) and c["commandName"] != "help"]
    page = [
        '.TH SWIFT\\-RECORD 1 "" "' + roff(version) + '" "User Commands"',
        ".SH NAME",
        "swift\\-record \\- " + roff(tool.get("abstract", "")),
        ".SH SYNOPSIS",
        ".B swift\\-record",
        "[\\fIrecord options\\fR]",
    ]
    for c in subcommands:
        if c["commandName"] != "record":
            page += [".br", ".B swift\\-record " + roff(c["commandName"]), "[\\fIoptions\\fR]"]
    page.append(".SH DESCRIPTION")
    page.append(discussion(tool.get("discussion", "")))
    page.append(command_section(tool, "Global options", describes=False))
    for c in subcommands:
        title = "swift-record " + c["commandName"] + (" (the default command)" if c["commandName"] == "record" else "")
        page.append(command_section(c, title))
    page += [
        ".SH EXIT STATUS",
        ".TP", "0", "Done: every requested file is complete and valid (record also after Ctrl\\-C, SIGTERM, SIGHUP or q + Enter, which finish the file); verify: the frames run without gaps, repeats or reordering.",
        ".TP", "1", "It could not be done, or not completely: a failure while recording, converting or repairing (what was recorded so far is kept, and the message says where), a device or server that is missing or went away, a full disk.",
        ".TP", "2", "Refused before anything was written, because of what was asked: an output that exists (without \\-y), a path that is not a regular file, an input that is not what it must be, settings the encoder or the container cannot take.",
        ".TP", "64", "Usage: an unknown option, a missing or malformed value.",
        ".TP", "130", "convert, trim or join stopped by SIGINT, SIGTERM or SIGHUP before the end (convert with \\-\\-allow\\-partial keeps the frames so far; trim and join leave nothing under the output's name).",
        ".SH FILES",
        ".TP",
        ".I swift\\-record\\-YYYYMMDD\\-HHMMSS.mp4",
        "The default output in the current directory (\\-2, \\-3, ... when taken).",
        ".SH SEE ALSO",
        ".BR ffmpeg (1),",
        ".BR ffprobe (1),",
        ".BR pactl (1)",
        ".PP",
        "The library's documentation: \\fBmake docs\\fR in the source tree.",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
