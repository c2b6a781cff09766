#!/usr/bin/env bash
# The processor time of single tests of the cli binary, whole: each test
# alone (`cargo test --test cli -- --exact NAME --test-threads 1`) in a
# cpuacct cgroup of its own, so that every process it starts counts (the
# trials' judges and servers, the cage's watchers and inits, a forking
# server's children), which `/usr/bin/time` misses (it counts only what the
# chain of waiting parents reaped). Prints CPU-s (user and system), wall and
# the load before and after, one line per test. Run it twice for a warm
# scratch; alternate before and after (git stash) for a comparison.
# An ignored test (`.ci/run` step 2) runs too when named.
# Needs root and a cgroup-v1 cpuacct hierarchy.
#
#   bench/test-cpu.sh LABEL TEST...      e.g. bench/test-cpu.sh after grade::a_database_error_shows_sqlites_message
#
# BIN=PATH runs that test binary instead of `cargo test` (no cargo in the
# count): a copy of target/debug/deps/cli-HASH kept as the "before", so that
# before and after alternate in one run while the tree holds the after.
# The copy runs the fencelab binary it was built beside (its path is
# compiled in): keep src/ unchanged between the two, or copy that too.
# Without cargo, the `[env]` of .cargo/config.toml is set here
# (FENCELAB_GC_KEEP: with the collector's default, a test alone would evict
# what the others built, and be measured rebuilding it).
set -uo pipefail
cd "$(dirname "$0")/.."
label=${1:?give a label, e.g. before}
shift
if [ -n "${BIN:-}" ]; then
    export FENCELAB_GC_KEEP=${FENCELAB_GC_KEEP:-$(sed -n 's/^FENCELAB_GC_KEEP = "\(.*\)"$/\1/p' .cargo/config.toml)}
    : "${FENCELAB_GC_KEEP:?not found in .cargo/config.toml}"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
    cg=/sys/fs/cgroup/cpuacct/fencelab-test-cpu-$$-$RANDOM
    mkdir "$cg"
    l0=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s.%N)
    if [ -n "${BIN:-}" ]; then
        bash -c 'echo $$ >"$1/cgroup.procs"; exec "$2" --exact "$3" --include-ignored --test-threads 1' \
            _ "$cg" "$BIN" "$t" >"$out" 2>&1
    else
        bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec cargo test -q --test cli -- --exact "$1" --include-ignored --test-threads 1' \
            _ "$cg" "$t" >"$out" 2>&1
    fi
    rc=$?
    e=$(date +%s.%N)
    sleep 1
    cpu=$(awk '{printf "%.2f", $1/1e9}' "$cg/cpuacct.usage")
    us=$(awk '/user/{u=$2}/system/{s=$2}END{printf "user %.2f system %.2f", u/100, s/100}' "$cg/cpuacct.stat")
    echo "$label $t: $cpu CPU-s ($us), $(echo "$e - $s" | bc | cut -c1-6) s wall, exit $rc, load $l0-$(cut -d' ' -f1 /proc/loadavg)"
    [ "$rc" = 0 ] || tail -20 "$out"
    for _ in $(seq 30); do [ -s "$cg/cgroup.procs" ] || break; sleep 1; done
    rmdir "$cg" 2>/dev/null || echo "cgroup $cg still has processes" >&2
done
