#!/usr/bin/env bash
# What `fencelab class` costs a large class: synthetic grade reports of
# N submissions (default 2,000, each failing like a mutant or like no
# mutant) and of N learners' test suites, summarised with --json and
# --html; wall time per report, median of REPS.
#
#   bench/class.sh [REPS]          (default 3)
#   N=200 bench/class.sh 1         (a quick check that the script runs)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release --quiet
fencelab="$PWD/target/release/fencelab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "${N:-2000}" <<'PY'
import json, pathlib, random, sys, tomllib
work, n = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(20261205)
mutants = [tomllib.loads(p.read_text()) | {"id": p.stem}
           for p in sorted(pathlib.Path("mutants").glob("*.toml"))]
tests = set()
for m in mutants:
    tests |= set(m.get("killers", [])) | set(m.get("survivors", []))
tests = sorted(tests)
def step(t): return int(t.split("::")[0][4:])
subs = []
for i in range(n):
    kind = rng.random()
    if kind < 0.5:
        fails = set()
    elif kind < 0.9:
        fails = set(rng.choice(mutants).get("killers", []))
    else:
        fails = set(rng.sample(tests, 2))
    steps = [{"step": s, "slug": "x", "passed": 1, "total": 1} for s in range(1, 9)]
    subs.append({"name": f"s{i:05}.rs", "file": f"s{i:05}.rs", "steps": steps,
                 "tests": [{"test": t, "step": step(t), "outcome": "failed" if t in fails else "passed"}
                           for t in tests]})
(work / "impl.json").write_text(json.dumps({"schema": 1, "suite": "sha256:x", "submissions": subs}))
suites = []
for i in range(n):
    caught = {m["id"] for m in mutants if rng.random() < 0.6}
    invalid = "t1 (assumes claim-many-winner)" if rng.random() < 0.2 else None
    suites.append({"name": f"l{i:05}", "file": f"l{i:05}/tests/mine/main.rs", "invalid_tests": invalid,
                   "steps": [], "tests": [{"test": f"step{m['step']}::{m['id']}", "step": m["step"],
                                            "outcome": "passed" if m["id"] in caught else "failed"}
                                           for m in mutants]})
(work / "tests.json").write_text(json.dumps({"schema": 1, "suite": "learner-tests-x", "submissions": suites}))
PY
for kind in impl tests; do
  for i in $(seq "$reps"); do
    t0=$(date +%s.%N)
    "$fencelab" class "$work/$kind.json" --json "$work/$kind-class.json" --html "$work/$kind.html" >/dev/null
    t1=$(date +%s.%N)
    echo "$kind $(python3 -c "print(f'{$t1 - $t0:.3f}')")" >> "$work/walls"
  done
done
python3 - "$work" "${N:-2000}" <<'PY'
import pathlib, statistics, sys
work, n = pathlib.Path(sys.argv[1]), sys.argv[2]
walls = {}
for line in (work / "walls").read_text().splitlines():
    kind, secs = line.split()
    walls.setdefault(kind, []).append(float(secs))
for kind, label in (("impl", "submissions"), ("tests", "test suites")):
    size = (work / f"{kind}.html").stat().st_size
    print(f"{n} {label:12}: {statistics.median(walls[kind]):.2f} s (median of {len(walls[kind])}), page {size / 1024:.0f} KiB")
PY
