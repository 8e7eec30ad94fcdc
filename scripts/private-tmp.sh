#!/bin/sh
# Runs a command with TMPDIR set to a new folder of its own, $TMPDIR/sr-make.XXXXXX (under
# /tmp without one), and removes that folder when the command ends, also on Ctrl-C. make
# test's steps, the sanitizer runs, the leak check and the fuzzing go through it: SwiftPM
# leaves a `TemporaryDirectory.*` folder in TMPDIR each time it runs (about 44 in one make
# test) and Chromium a profile lock folder, which would otherwise pile up in /tmp. The name is short: tests put Unix sockets a
# few folders below it, and a socket's path has at most 107 bytes.
# SwiftPM keeps its lock files in TMPDIR too: a `swift build` started by hand meanwhile does
# not wait for the step's. (--one-file-system: a tmpfs a test mounted and failed to unmount
# is left alone.)
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/sr-make.XXXXXX") || exit 1
# Readable by others, as /tmp is: tests start servers whose workers run as another user.
chmod 755 "$dir" || exit 1
trap 'rm -rf --one-file-system "$dir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
TMPDIR=$dir "$@"
