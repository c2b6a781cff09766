#!/bin/sh
# Judging a learner's own Python tests: `grade --tests` of the thorough
# fixture (tests/fixtures/python_mine/thorough.py, 20 tests) against the
# Python reference, every Python wheat and every Python mutant (the wheats
# checked against the suite first), as `.ci/run`'s second step runs it.
# Warm (a first run of each binary is left out), medians of REPS runs of
# the wall time and, where a cpuacct cgroup can be made, of the CPU-seconds
# of the command and all it starts. Run from anywhere:
#   sh bench/python_mine.sh            (REPS=3; FENCELAB=path/to/fencelab,
#                                       default target/release)
#   BEFORE=path/to/an/older/fencelab sh bench/python_mine.sh
#                                      (that binary too, alternating with
#                                       this one's, and the ratios; WARM=0
#                                       leaves out the warming runs, where
#                                       both have run here before)
set -eu
. "$(dirname "$0")/keep.sh"
. "$(dirname "$0")/counted.sh"
cd "$(dirname "$0")/.."
fencelab=$(realpath "${FENCELAB:-target/release/fencelab}")
before=${BEFORE:+$(realpath "$BEFORE")}
reps=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
judge() { # WHO FENCELAB
  start=$(now)
  run_counted "$work/cpu" "$2" grade --tests tests/fixtures/python_mine/thorough.py \
    --timeout 60 --json "$work/$1.json" -q >/dev/null 2>&1 || true
  echo "$1 $start $(now) $(tail -n 1 "$work/cpu")" | tee -a "$work/runs"
}
# Warm: each binary's scratch builds, its judge and its records.
if [ "${WARM:-1}" != 0 ]; then
  judge warm "$fencelab"
  if [ -n "$before" ]; then judge warm "$before"; fi
fi
: >"$work/runs"
for _ in $(seq "$reps"); do
  judge after "$fencelab"
  if [ -n "$before" ]; then judge before "$before"; fi
done
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
times, cpus = {}, {}
for line in open(f"{work}/runs"):
    who, start, end, cpu = line.split()
    times.setdefault(who, []).append(float(end) - float(start))
    if cpu != "-":
        cpus.setdefault(who, []).append(int(cpu) / 1e9)
for who in ("after", "before"):
    if who not in times:
        continue
    s = json.load(open(f"{work}/{who}.json"))["submissions"][0]
    caught = sum(st["passed"] for st in s["steps"])
    total = sum(st["total"] for st in s["steps"])
    cpu = (f", CPU-s {' '.join(f'{c:.1f}' for c in cpus[who])} median "
           f"{statistics.median(cpus[who]):.1f}") if who in cpus else ""
    print(f"{who}: wall s {' '.join(f'{t:.1f}' for t in times[who])} median "
          f"{statistics.median(times[who]):.1f}{cpu} (caught {caught} of {total}, "
          f"invalid tests: {s.get('invalid_tests')})")
if "before" in times:
    ratio = lambda d: statistics.median(d["after"]) / statistics.median(d["before"])
    line = f"after / before: wall {ratio(times):.2f}x"
    if "before" in cpus and "after" in cpus:
        line += f", CPU {ratio(cpus):.2f}x"
    print(line)
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
