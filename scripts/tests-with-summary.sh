#!/usr/bin/env bash
# Runs a test command (its arguments), its output passing through as it comes and kept in
# $TEST_LOG; when it fails, repeats every failed assertion and test at the end, where a log
# cut to its last lines (CI's summary) still shows what failed.
set -uo pipefail
log=${TEST_LOG:-$(mktemp)}
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo "---- failures of: $* (full log: $log) ----"
    grep -E ": error: |' failed \(|Fatal error|ERROR: (Address|Thread)Sanitizer|SUMMARY: " "$log" | cut -c1-400 | tail -40
    echo "---- exit status $status ----"
fi
exit "$status"
