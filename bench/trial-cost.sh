#!/usr/bin/env bash
# What one trial costs in processor time: warm `grade` of 9 copies of the
# reference (each with a distinct trailing comment, so 9 submissions and
# 9 servers), CPU-seconds of the whole process tree (user + system of
# fencelab and every descendant it waited for, `/usr/bin/time`), wall time
# beside it. Two binaries side by side, alternating, medians of REPS.
#
#   bench/trial-cost.sh BEFORE [AFTER] [REPS]     (AFTER: this tree's release
#                                                  build; REPS defaults to 3)
#
# Both binaries should live in this tree's target/release (their scratch
# builds then share its workspace; copy the older one there under another
# name). Also prints the load before and after.
set -euo pipefail
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
before=${1:?give the binary to compare with, e.g. target/release/fencelab-before}
after=${2:-$PWD/target/release/fencelab}
reps=${3:-3}
export FENCELAB_GC_KEEP=${FENCELAB_GC_KEEP:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/class"
for i in 1 2 3 4 5 6 7 8 9; do
  { cat src/lease.rs; echo "// copy $i"; } > "$work/class/copy$i.rs"
done
# Warm each side's scratch builds.
for side in "$before" "$after"; do "$side" grade "$work"/class/*.rs >/dev/null 2>&1 || true; done
uptime
for rep in $(seq "$reps"); do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    /usr/bin/time -f "$side %e %U %S" -o "$work/t" "$bin" grade "$work"/class/*.rs >/dev/null 2>&1 || true
    cat "$work/t" | tee -a "$work/times"
  done
done
uptime
python3 - "$work/times" <<'PY'
import sys, statistics
from collections import defaultdict
cpu, wall = defaultdict(list), defaultdict(list)
for line in open(sys.argv[1]):
    side, e, u, s = line.split()
    cpu[side].append(float(u) + float(s))
    wall[side].append(float(e))
for side in ("before", "after"):
    print(f"{side:7} CPU-s {[round(x, 2) for x in cpu[side]]} median {statistics.median(cpu[side]):.2f}"
          f"   wall s {[round(x, 2) for x in wall[side]]} median {statistics.median(wall[side]):.2f}")
b, a = statistics.median(cpu["before"]), statistics.median(cpu["after"])
print(f"CPU after/before: {a / b:.2f}")
PY
