#!/bin/sh
# Issue 20's point 5, the Python edition beside the Rust one on this machine
# (say the load average: it is printed first and last). Run from anywhere:
#   sh bench/python.sh      (REPS=3 checks of each lab, BATCH=100 submissions;
#                            FENCELAB=path/to/fencelab, default target/release;
#                            BEFORE=path/to/an older fencelab: its check of the
#                            Python lab alternates with this one's, and it
#                            grades BEFORE_BATCH=10 submissions too)
# 1. check, warm: a Python lab and a Rust lab made by `fencelab new`, each
#    holding its reference, checked alternately REPS times (medians of the
#    wall and, where a cpuacct cgroup can be made, of the CPU-seconds of
#    the command and all it starts);
# 2. verify: the same three mutants against each reference, at the same time
#    (so under the same load): seconds of trials per mutant, side by side;
# 3. grade: BATCH Python submissions (the reference, each copy a file of its
#    own) in one batch, per minute;
# 4. the floor of one Python trial: an interpreter started as the judge
#    starts it, the reference imported, one call answered
#    (bench/python_floor.py), beside the median trial of each baseline.
set -eu
. "$(dirname "$0")/keep.sh"
. "$(dirname "$0")/counted.sh"
cd "$(dirname "$0")/.."
fencelab=$(realpath "${FENCELAB:-target/release/fencelab}")
reps=${REPS:-3}
batch=${BATCH:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

"$fencelab" new "$work/py" --python --lang en >/dev/null 2>&1
cp python/lease.py "$work/py/lease.py"
"$fencelab" new "$work/rs" --lang en >/dev/null 2>&1
cp src/lease.rs "$work/rs/src/lib.rs"
for lab in py rs; do (cd "$work/$lab" && "$fencelab" check -q >/dev/null 2>&1) || true; done
before=${BEFORE:+$(realpath "$BEFORE")}
if [ -n "$before" ]; then (cd "$work/py" && "$before" check -q >/dev/null 2>&1) || true; fi
for _ in $(seq "$reps"); do
  for lab in py rs before; do
    run=$fencelab dir=$lab
    if [ "$lab" = before ]; then
      [ -n "$before" ] || continue
      run=$before dir=py
    fi
    start=$(now)
    (cd "$work/$dir" && run_counted "$work/cpu" "$run" check -q >/dev/null 2>&1) ||
      echo "$lab: check did not pass" >&2
    echo "$lab $start $(now) $(tail -n 1 "$work/cpu")" >>"$work/checks"
  done
done
python3 - "$work/checks" <<'PY'
import statistics, sys
times, cpus = {}, {}
for line in open(sys.argv[1]):
    lab, start, end, cpu = line.split()
    times.setdefault(lab, []).append(float(end) - float(start))
    if cpu != "-":
        cpus.setdefault(lab, []).append(int(cpu) / 1e9)
def cpu(lab):
    return f", {statistics.median(cpus[lab]):.2f} CPU-s" if lab in cpus else ""
py, rs = statistics.median(times["py"]), statistics.median(times["rs"])
print(f"check, warm (median of {len(times['py'])}): Python lab {py:.2f} s{cpu('py')}, "
      f"Rust lab {rs:.2f} s{cpu('rs')} (target: Python within 3 s)")
if "before" in times:
    print(f"check of the Python lab by BEFORE, alternating with it (median of "
          f"{len(times['before'])}): {statistics.median(times['before']):.2f} s{cpu('before')}")
PY

mutants="enqueue-insert-or-replace claim-expiry-inclusive release-resets-fence"
"$fencelab" verify --python --exact $mutants --json "$work/py.json" -q >/dev/null &
"$fencelab" verify --exact $mutants --json "$work/rs.json" -q >/dev/null &
wait
python3 - "$work" <<'PY'
import json, statistics, sys
out = sys.argv[1]
per = {}
for name in ("rs", "py"):
    d = json.load(open(f"{out}/{name}.json"))
    trials = [s for t in d["baseline"]["tests"] for s in t["secs"]]
    per[name] = statistics.mean(m["secs"] for m in d["mutants"])
    print(f"verify {name}: total {d['secs']:.1f} s, baseline {d['baseline']['secs']:.1f} s, "
          f"median trial {statistics.median(trials):.2f} s, test-seconds per mutant {per[name]:.1f}")
print(f"verify, Python / Rust per mutant: {per['py'] / per['rs']:.2f}x (target: within 2x)")
PY

mkdir "$work/subs"
for i in $(seq "$batch"); do
  { echo "# submission $i"; cat python/lease.py; } >"$work/subs/s$i.py"
done
grade() { # WHO FENCELAB N
  start=$(now)
  run_counted "$work/cpu" "$2" grade $(ls "$work"/subs/*.py | head -n "$3") \
    --json "$work/grade-$1.json" -q >/dev/null || true
  end=$(now)
  python3 - "$work/grade-$1.json" "$start" "$end" "$3" "$1" "$(tail -n 1 "$work/cpu")" <<'PY'
import json, sys
report, start, end, n, who = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
cpu = "" if sys.argv[6] == "-" else f", {int(sys.argv[6]) / 1e9 / n:.2f} CPU-s a submission"
subs = json.load(open(report))["submissions"]
full = sum(1 for s in subs if s["score"] == 100)
secs = end - start
print(f"grade{' (BEFORE)' if who == 'before' else ''}: {n} Python submissions in {secs:.1f} s, "
      f"{n / secs * 60:.1f} per minute{cpu} ({full} scored 100; target: 60 per minute)")
PY
}
grade after "$fencelab" "$batch"
if [ -n "$before" ]; then grade before "$before" "${BEFORE_BATCH:-10}"; fi

server=$(ls -td target/fencelab/ws/crates/pyserver-* 2>/dev/null | head -1)
root=$(ls -td target/fencelab/ws/crates/pyroot-* 2>/dev/null | head -1)
if [ -n "$server" ]; then python3 bench/python_floor.py "$server" 20 $root; fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
