#!/usr/bin/env bash
# Runs `cargo test` (with any arguments given) while two busy processes keep
# both cores of a 2-core machine loaded, as a shared CI machine is. The suite
# must pass like this: a test whose verdict depends on speed is a defect.
#   scripts/test-under-load.sh            # the whole suite, once
#   RUNS=3 scripts/test-under-load.sh     # three times in a row
set -uo pipefail
cd "$(dirname "$0")/.."
busy=()
stop() { for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop EXIT
for _ in 1 2; do
    yes >/dev/null &
    busy+=("$!")
done
status=0
for run in $(seq 1 "${RUNS:-1}"); do
    echo "== cargo test under load: run $run of ${RUNS:-1} (busy pids: ${busy[*]})" >&2
    if ! cargo test "$@"; then
        status=1
        echo "== run $run failed" >&2
    fi
done
exit "$status"
