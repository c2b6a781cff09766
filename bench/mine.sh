#!/usr/bin/env bash
# Benchmark of judging a learner's tests (`fencelab check --mine`): a learner
# suite of 20 tests (the first tests of each step of fencelab's own suite,
# dropped into a lab crate as tests/mine/), judged against the reference
# (twice), every wheat and every mutant. Warm (the second run on), medians of
# REPS. Target (issue 11): within 30 s on this 2-core machine.
#
#   bench/mine.sh [REPS]            (default 3)
#   BEFORE=path/to/fencelab bench/mine.sh    (also that binary, alternating
#                                             with this tree's, CPU-s beside)
set -euo pipefail
. "$(dirname "$0")/keep.sh"
. "$(dirname "$0")/counted.sh"
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release --quiet
fencelab="$PWD/target/release/fencelab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fencelab" new "$work/lab" --lang en >/dev/null 2>&1
python3 - "$work/lab" <<'PY'
import re, sys, pathlib
lab = pathlib.Path(sys.argv[1])
mine = lab / "tests" / "mine"
suite = pathlib.Path("tests/behaviour")
root = pathlib.Path("tests/behaviour.rs").read_text()
root = "\n".join(l for l in root.splitlines() if not l.strip().startswith("#[path"))
root = root.replace("use fencelab::lease;", "use lab as lease;")
(mine / "main.rs").write_text(root + "\n")
(mine / "support.rs").write_text((suite / "support.rs").read_text())
per_step = {1: 3, 2: 2, 3: 2, 4: 4, 5: 3, 6: 2, 7: 2, 8: 2}   # 20 tests
for step, keep in per_step.items():
    text = (suite / f"step{step}.rs").read_text()
    parts = re.split(r"\n(?=#\[test\]\n)", text)
    head, tests = parts[0], parts[1:]
    # Keep helpers (the child-process one is an #[ignore]d test: keep it too).
    kept = [t for t in tests if "#[ignore" in t.split("\n", 2)[1] or "#[ignore" in t[:80]]
    plain = [t for t in tests if t not in kept][:keep]
    (mine / f"step{step}.rs").write_text("\n".join([head] + plain + kept) + "\n")
PY
cd "$work/lab"
count=$("$fencelab" check --mine --json "$work/first.json" >/dev/null 2>&1; python3 -c "import json,sys; r=json.load(open('$work/first.json')); print(len(r['tests']), r['correct_implementations'], r['mutants'])")
now() { date +%s.%N; }
# BEFORE=path/to/fencelab: that binary too, alternating with this tree's.
sides="after=$fencelab"
if [ -n "${BEFORE:-}" ]; then
  before=$(realpath "$BEFORE")
  "$before" check --mine >/dev/null 2>&1 || true
  sides="before=$before $sides"
fi
for _ in $(seq "$reps"); do
  for side in $sides; do
    t0=$(now); run_counted "$work/cpu" "${side#*=}" check --mine --json "$work/r.json" >/dev/null 2>&1 || true; t1=$(now)
    python3 -c "print('${side%%=*}', f'{$t1 - $t0:.3f}')" >> "$work/times"
  done
done
paste -d' ' "$work/times" "$work/cpu" > "$work/rows"
python3 - "$work/rows" $count <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
tests, correct, mutants = map(int, sys.argv[2:5])
trials = tests * (correct + mutants)
print(f"check --mine, warm: {tests} learner tests x ({correct} correct + {mutants} mutants) = {trials} trials")
for side in dict.fromkeys(r[0] for r in rows):
    times = [float(r[1]) for r in rows if r[0] == side]
    cpus = [int(r[2]) / 1e9 for r in rows if r[0] == side and r[2] != "-"]
    med = statistics.median(times)
    cpu = f", {statistics.median(cpus):.1f} CPU-s {[round(c, 1) for c in cpus]}" if cpus else ""
    print(f"  {side}: median {med:.2f} s of {len(times)} runs {[round(t, 2) for t in times]}{cpu}; "
          f"{trials / med:.0f} trials/s; target <= 30 s")
PY
