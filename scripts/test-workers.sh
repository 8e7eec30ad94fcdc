#!/usr/bin/env bash
# The test run of make test (and of make check-sanitizers): the groups of
# scripts/test-groups.txt in workers side by side, each group a `swift test --skip-build` of
# its classes: `servers` and `realtime`, whose time is mostly waiting (private sessions,
# real-time recordings, sleeps), beside `cpu`, the classes that keep a core busy; the servers
# worker then runs `conversions` (test-groups.py --workers). TEST_WORKERS chooses other
# workers: the sanitizer runs use "servers+realtime cpu+conversions". Arguments are added
# to every `swift test` (the sanitizer runs pass --sanitize, --scratch-path and their --skip
# patterns). Each group goes through tests-with-summary.sh with its own log
# ($TEST_LOG_DIR/tests-GROUP.log, default .build), its lines prefixed with its name; the run
# fails if any fails, and ends with the failures of each failed group.
# (--ignore-lock: all read the one build, which --skip-build leaves alone.)
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
logs=${TEST_LOG_DIR:-.build}
mkdir -p "$logs"
# TEST_WORKERS lists the workers, separated by spaces; a worker is a group, groups joined
# by + (one `swift test` of all their classes), or those joined by , (one `swift test` after
# the other). By default, test-groups.py --workers.
if [ -n "${TEST_WORKERS:-}" ]; then
    read -r -a workers <<< "$TEST_WORKERS"
else
    mapfile -t workers < <(python3 scripts/test-groups.py --workers) || exit 1
fi
groups=()
for w in "${workers[@]}"; do
    IFS=, read -r -a parts <<< "$w"
    groups+=("${parts[@]}")
done

run_group() {
    local group=$1 filter
    shift
    filter=$(python3 scripts/test-groups.py --filter "$group") || return 1
    TEST_LOG="$logs/tests-$group.log" ./scripts/tests-with-summary.sh \
        "$swift" test --skip-build --ignore-lock --disable-swift-testing --filter "$filter" "$@" 2>&1 | sed -u "s/^/[$group] /"
    echo "${PIPESTATUS[0]}" > "$logs/tests-$group.status"
}

# A worker's groups one after the other; the later ones also after a failure (each group's
# exit status is in its .status file).
worker() {
    local spec=$1 group
    shift
    IFS=, read -r -a parts <<< "$spec"
    for group in "${parts[@]}"; do
        run_group "$group" "$@"
    done
}

start=$(date +%s)
declare -A pid status
running_tests() { pgrep -fc 'PackageTests\.xctest' || true; }
for group in "${groups[@]}"; do
    rm -f "$logs/tests-$group.log" "$logs/tests-$group.status"
done
# (A worker's later groups plan while the others' tests run: only the first waits its turn.)
for w in "${workers[@]}"; do
    before=$(running_tests)
    worker "$w" "$@" & pid[$w]=$!
    # One at a time through SwiftPM's planning, which opens the build database even with
    # --skip-build (two at once: "database is locked"): the next starts once this one's
    # test process runs (or it has ended). (Not once its log shows a test: XCTest's output
    # to a pipe is buffered, and waiting for it cost 70 s a worker.)
    for _ in $(seq 600); do
        [ "$(running_tests)" -gt "$before" ] && break
        kill -0 "${pid[$w]}" 2>/dev/null || break
        sleep 0.1
    done
done
for w in "${workers[@]}"; do
    wait "${pid[$w]}"
done
for group in "${groups[@]}"; do
    status[$group]=$(cat "$logs/tests-$group.status" 2>/dev/null || echo 1)
done

for group in "${groups[@]}"; do
    summary=$(grep -E "Executed [0-9]+ tests?," "$logs/tests-$group.log" | tail -1)
    echo "test-workers: $group: exit ${status[$group]},${summary}"
done
echo "test-workers: all done in $(( $(date +%s) - start )) s"
result=0
for group in "${groups[@]}"; do
    if [ "${status[$group]}" -ne 0 ]; then
        result=1
        echo "---- failures of the $group group (full log: $logs/tests-$group.log) ----"
        grep -E ": error: |' failed \(|Fatal error|ERROR: (Address|Thread)Sanitizer|SUMMARY: " "$logs/tests-$group.log" | cut -c1-400 | tail -40
    fi
done
exit "$result"
