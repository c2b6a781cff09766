#!/usr/bin/env bash
# What the random calls (tests/behaviour/random.rs, 40 sequences a step) cost
# a submission, on a batch of 100 distinct correct submissions (copies of the
# reference and of the wheats, each with its own comment) graded in one call:
#
# - per submission, the trial seconds of its eight random tests, from the
#   JSON report (median and largest over the batch);
# - the whole batch's wall time with the random calls and
#   with none (FENCELAB_RANDOM_SEQUENCES=0), alternating, REPS pairs.
#
#   bench/random.sh [REPS]          (default 2)
#   N=10 bench/random.sh 1          (a quick check that the script runs)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-2}
cargo build --release --quiet
fencelab="$PWD/target/release/fencelab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/class"
python3 - "$work/class" "${N:-100}" <<'PY'
import sys, pathlib
out = pathlib.Path(sys.argv[1])
size = int(sys.argv[2])
correct = [pathlib.Path("src/lease.rs").read_text()]
correct += [pathlib.Path(p).read_text() for p in sorted(pathlib.Path("wheats").glob("*.rs"))]
for i in range(size):
    (out / f"s{i:03}.rs").write_text(correct[i % len(correct)] + f"\n// {i}\n")
PY
run() { # label sequences: one grade of the class, its wall seconds
  local t0 t1
  t0=$(date +%s.%N)
  if [ "$2" = default ]; then
    "$fencelab" grade "$work"/class/*.rs --json "$work/$1.json" >/dev/null 2>&1 || true
  else
    FENCELAB_RANDOM_SEQUENCES="$2" "$fencelab" grade "$work"/class/*.rs --json "$work/$1.json" >/dev/null 2>&1 || true
  fi
  t1=$(date +%s.%N)
  echo "$1 $(python3 -c "print(f'{$t1 - $t0:.1f}')")" >> "$work/walls"
}
for i in $(seq "$reps"); do
  run "with-$i" default
  run "without-$i" 0
done
python3 - "$work" "$reps" <<'PY'
import json, pathlib, statistics, sys
work, reps = pathlib.Path(sys.argv[1]), int(sys.argv[2])
walls = dict(line.split() for line in (work / "walls").read_text().splitlines())
for side in ("with", "without"):
    xs = [float(walls[f"{side}-{i}"]) for i in range(1, reps + 1)]
    print(f"{side:8} random calls: batch wall {statistics.median(xs):.1f} s (median of {reps})")
per = []
for i in range(1, reps + 1):
    report = json.loads((work / f"with-{i}.json").read_text())
    for s in report["submissions"]:
        per.append(sum(t.get("secs", 0) for t in s["tests"] if "random_calls" in t["test"]))
        assert s["score"] == 100.0, s["name"]
print(f"random tests' trial seconds a submission: median {statistics.median(per):.2f}, "
      f"largest {max(per):.2f} (over {len(per)} gradings)")
w = statistics.median(float(walls[f'with-{i}']) for i in range(1, reps + 1))
wo = statistics.median(float(walls[f'without-{i}']) for i in range(1, reps + 1))
n = len(json.loads((work / "with-1.json").read_text())["submissions"])
print(f"batch wall per submission: {(w - wo) / n:.2f} s more with them ({w / wo:.2f}x)")
PY
