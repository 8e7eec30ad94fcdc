#!/usr/bin/env bash
# make test's test run: two workers side by side, each a `swift test --skip-build` of one
# group of classes (scripts/test-groups.txt): `realtime`, the classes whose time is mostly
# waiting (real-time recordings, private servers, sleeps), beside `cpu`, the classes that keep
# a core busy. Each goes through tests-with-summary.sh with its own log
# (.build/tests-realtime.log, .build/tests-cpu.log), its lines prefixed with its name; the run
# fails if either fails, and ends with the failures of each failed group.
# (--ignore-lock: both read the one build, which --skip-build leaves alone.)
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
logs=${TEST_LOG_DIR:-.build}
mkdir -p "$logs"

worker() {
    local group=$1 filter
    filter=$(python3 scripts/test-groups.py --filter "$group") || return 1
    TEST_LOG="$logs/tests-$group.log" ./scripts/tests-with-summary.sh \
        "$swift" test --skip-build --ignore-lock --disable-swift-testing --filter "$filter" 2>&1 | sed -u "s/^/[$group] /"
    return "${PIPESTATUS[0]}"
}

start=$(date +%s)
worker realtime & realtime=$!
worker cpu & cpu=$!
wait "$realtime"; realtime_status=$?
wait "$cpu"; cpu_status=$?

for group in realtime cpu; do
    status_var=${group}_status
    summary=$(grep -E "Executed [0-9]+ tests" "$logs/tests-$group.log" | tail -1)
    echo "test-workers: $group: exit ${!status_var},${summary}"
done
echo "test-workers: both done in $(( $(date +%s) - start )) s"
status=0
for group in realtime cpu; do
    status_var=${group}_status
    if [ "${!status_var}" -ne 0 ]; then
        status=1
        echo "---- failures of the $group group (full log: $logs/tests-$group.log) ----"
        grep -E ": error: |' failed \(|Fatal error|ERROR: (Address|Thread)Sanitizer|SUMMARY: " "$logs/tests-$group.log" | cut -c1-400 | tail -40
    fi
done
exit "$status"
