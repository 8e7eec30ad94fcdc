#!/usr/bin/env python3
"""Writes swift-record's bash, zsh and fish completions from the argument definitions.

Usage: make-completions.py BINARY DIRECTORY

Each script is argument-parser's own (`BINARY --generate-completion-script SHELL`), so it
completes what `--help` lists: subcommands, options, the values of options with a fixed
set (codecs, presets, --source kinds), and `--audio`'s devices and programs, `--monitor`'s
monitors and `--camera`'s cameras, asked of the binary at the moment of completion. bash is taught one thing more: `record` is the default
subcommand, so `swift-record --sou<Tab>` completes record's options without the word
`record`.
"""
import os
import subprocess
import sys

# The branch of the top-level function that offers subcommand names, as argument-parser
# writes it, and what it becomes. A change in argument-parser's script fails here, loudly.
OFFER_SUBCOMMANDS = """    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W '{names}' -- "${{cur}}"))
        ;;"""
DEFAULT_RECORD = """    *)
        # No subcommand named: the words are record's, the default subcommand.
        COMPREPLY=()
        unparsed_words=("${{COMP_WORDS[@]:1:${{COMP_CWORD}}}}")
        "_swift-record_record"
        [[ "${{COMP_CWORD}}" -eq 1 ]] && COMPREPLY+=($(compgen -W '{names}' -- "${{cur}}"))
        ;;"""


def main():
    binary, directory = sys.argv[1], sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    files = {"bash": "swift-record.bash", "zsh": "_swift-record", "fish": "swift-record.fish"}
    for shell, name in files.items():
        script = subprocess.run([binary, "--generate-completion-script", shell], check=True, capture_output=True, text=True).stdout
        if shell == "bash":
            names = "record convert trim join thumbnail screenshot verify repair help"
            offer = OFFER_SUBCOMMANDS.format(names=names)
            if offer not in script:
                sys.exit("make-completions.py: argument-parser's bash script changed; teach the default subcommand again")
            script = script.replace(offer, DEFAULT_RECORD.format(names=names))
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(script)


if __name__ == "__main__":
    main()
