#!/bin/sh
# Two fencelab binaries side by side on the Python edition's point 5, without
# the rest of bench/python.sh (verify, the batch of 100): a warm `check` of a
# Python lab holding the reference, then `grade` of N copies of it, each
# alternating BEFORE and AFTER, REPS times; medians of the CPU-seconds of the
# command and all it starts (a cpuacct cgroup of its own) and of the wall.
# Say the load (printed first and last): wall times are the load's.
#   sh bench/python_ab.sh BEFORE AFTER   (REPS=3, N=10)
set -eu
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
before=$(realpath "$1")
after=$(realpath "$2")
reps=${REPS:-3}
n=${N:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpuacct=/sys/fs/cgroup/cpuacct
# counted WHO WHAT CMD...: runs CMD, appends "WHO WHAT wall cpu" to the tally.
counted() {
  who=$1 what=$2; shift 2
  group=$cpuacct/fencelab-ab-$$
  mkdir "$group"
  start=$(date +%s.%N)
  sh -c 'echo $$ >"$1/tasks"; shift; exec "$@"' sh "$group" "$@" >/dev/null 2>&1 ||
    echo "$who $what: exit $?" >&2
  end=$(date +%s.%N)
  echo "$who $what $(echo "$end - $start" | bc) $(cat "$group/cpuacct.usage")" >>"$work/tally"
  for pid in $(cat "$group/tasks"); do echo "$pid" >"$cpuacct/tasks" 2>/dev/null || true; done
  rmdir "$group" 2>/dev/null || true
}
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$after" new "$work/py" --python --lang en >/dev/null 2>&1
cp python/lease.py "$work/py/lease.py"
mkdir "$work/subs"
for i in $(seq "$n"); do
  { echo "# submission $i"; cat python/lease.py; } >"$work/subs/s$i.py"
done
# Warm both (each builds its own judge once).
for bin in "$before" "$after"; do
  (cd "$work/py" && "$bin" check -q >/dev/null 2>&1) || true
  "$bin" grade "$work/subs/s1.py" -q >/dev/null 2>&1 || true
done
for _ in $(seq "$reps"); do
  for who in before after; do
    bin=$before
    [ "$who" = after ] && bin=$after
    (cd "$work/py" && counted "$who" check "$bin" check -q)
  done
done
for _ in $(seq "$reps"); do
  for who in before after; do
    bin=$before
    [ "$who" = after ] && bin=$after
    counted "$who" grade "$bin" grade $(ls "$work"/subs/*.py) --json "$work/$who.json" -q
  done
done
python3 - "$work/tally" "$n" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    who, what, wall, cpu = line.split()
    rows.setdefault((what, who), []).append((float(wall), int(cpu) / 1e9))
for what in ("check", "grade"):
    for who in ("before", "after"):
        r = rows.get((what, who), [])
        if not r:
            continue
        cpus = " ".join(f"{c:.2f}" for _, c in r)
        walls = " ".join(f"{w:.2f}" for w, _ in r)
        print(f"{what:5} {who:6} CPU-s {cpus}  median {statistics.median(c for _, c in r):.2f}"
              f"   wall s {walls}  median {statistics.median(w for w, _ in r):.2f}")
print(f"(grade: {sys.argv[2]} Python submissions a run)")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
