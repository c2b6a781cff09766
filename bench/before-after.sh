#!/usr/bin/env bash
# Warm `fencelab verify` of an earlier revision beside a later one (the work
# tree by default), in one run, alternating so that the machine's load falls
# on both alike: medians of REPS runs each, and their ratio. For "no
# performance regression" claims of a change.
#
#   bench/before-after.sh BEFORE [REPS]          (REPS defaults to 5)
#
# BEFORE is built in a temporary worktree with a target directory of its own;
# each side warms its own scratch build first. Both verify the same thing: the
# reference and mutants of BEFORE (so that a change to mutants/ in between
# does not change the work).
set -euo pipefail
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
rev=${1:?give the revision to compare with, e.g. HEAD~3}
reps=${2:-5}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --quiet --detach "$work/before" "$rev"
( cd "$work/before" && CARGO_TARGET_DIR="$work/before-target" cargo build --release --quiet )
cargo build --release --quiet
before="$work/before-target/release/fencelab"
after="$PWD/target/release/fencelab"
what=(verify --color never --mutants "$work/before/mutants" --impl "$work/before/src/lease.rs")
count=$(find "$work/before/mutants" -name '*.toml' | wc -l)
now() { date +%s.%N; }
run() { # side binary
  local t0 t1
  t0=$(now)
  ( cd "$work/before" && "$2" "${what[@]}" >/dev/null 2>&1 ) || true
  t1=$(now)
  echo "$1 $(python3 -c "print(f'{$t1 - $t0:.3f}')")" >> "$work/times"
}
# Warm both scratch builds.
( cd "$work/before" && "$before" "${what[@]}" >/dev/null 2>&1 ) || true
( cd "$work/before" && "$after" "${what[@]}" >/dev/null 2>&1 ) || true
for _ in $(seq "$reps"); do
  run before "$before"
  run after "$after"
done
python3 - "$work/times" "$rev" "$(git rev-parse --short HEAD)" "$count" <<'PY'
import sys, statistics
from collections import defaultdict
t = defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v))
b, a = statistics.median(t["before"]), statistics.median(t["after"])
print(f"warm verify of {sys.argv[4]} mutants, medians of {len(t['after'])} alternating runs")
print(f"  before ({sys.argv[2]}):            {b:7.2f} s   runs {[round(x, 2) for x in t['before']]}")
print(f"  after  ({sys.argv[3]} + work tree): {a:7.2f} s   runs {[round(x, 2) for x in t['after']]}")
print(f"  after / before: {a / b:.2f}")
PY
