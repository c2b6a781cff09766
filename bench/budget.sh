#!/usr/bin/env bash
# The per-submission budget (`grade --budget`) on the course's batch: 100
# distinct submissions (60 correct, 25 broken, 10 that do not compile, 5 whose
# claim_many spins forever), graded in one call with the default budget and
# with a budget too large to matter, and the 95 without the hanging ones; in
# submissions per minute (goal: at least 80 on 2 cores with the default).
#
#   bench/budget.sh [REPS]          (default 2)
#   N=10 bench/budget.sh 1          (a class of N in the same proportions,
#                                    at least one of each kind: a quick check
#                                    that the script runs; figures need 100)
#   GRADE_ARGS="--jobs 12" bench/budget.sh    (more options for every grade)
#   BEFORE=path/to/fencelab bench/budget.sh   (QUICK=1: no run without a budget)
#                                   (also that binary, alternating with this
#                                    tree's, each row named by its side)
set -euo pipefail
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
reps=${1:-2}
cargo build --release --quiet
sides="after=$PWD/target/release/fencelab"
[ -n "${BEFORE:-}" ] && sides="before=$BEFORE $sides"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/class"
python3 - "$work/class" "${N:-100}" <<'PY'
import sys, pathlib, tomllib
out = pathlib.Path(sys.argv[1])
size = int(sys.argv[2])
ref = pathlib.Path("src/lease.rs").read_text()
def change(toml):
    t = tomllib.loads(pathlib.Path(toml).read_text())
    assert ref.count(t["find"]) == 1, toml
    return ref.replace(t["find"], t["replace"], 1)
correct = [ref, pathlib.Path("tests/fixtures/submissions/alternative.rs").read_text()]
correct += [pathlib.Path(p).read_text() for p in sorted(pathlib.Path("wheats").glob("*.rs"))]
broken = [change(p) for p in sorted(pathlib.Path("mutants").glob("*.toml"))]
not_compiling = [change("tests/fixtures/submissions/does_not_compile.toml")]
hanging = [change("tests/fixtures/submissions/infinite_loop.toml")]
counts = {"broken": max(1, size * 25 // 100), "nocompile": max(1, size // 10), "hangs": max(1, size * 5 // 100)}
counts["correct"] = max(1, size - sum(counts.values()))
kinds = [(k, s, counts[k]) for k, s in [("correct", correct), ("broken", broken), ("nocompile", not_compiling), ("hangs", hanging)]]
n = 0
for kind, sources, count in kinds:
    for i in range(count):
        src = sources[i % len(sources)]
        (out / f"s{n:03}-{kind}.rs").write_text(src + f"\n// submission {n}\n")
        n += 1
PY
# Warm the batch's builds once.
for side in $sides; do "${side#*=}" grade "$work"/class/*.rs >/dev/null 2>&1 || true; done
run() { # name args...
  local t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$fencelab" grade "${@:2}" ${GRADE_ARGS:-} --json "$work/$1.json" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  python3 - "$1" "$t0" "$t1" "$work/$1.json" <<'PY'
import sys, json
name, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
r = json.load(open(path))
subs = r["submissions"]
secs = t1 - t0
hangs = [s for s in subs if "hangs" in s["name"]]
cost = [round(sum(t["secs"] for t in s["tests"]), 1) for s in hangs]
over = [sum(t["outcome"] == "over_budget" for t in s["tests"]) for s in hangs]
wrong = [s["name"] for s in subs if ("correct" in s["name"] and s["score"] != 100)]
print(f"{name:28} {len(subs):3} subs {secs:7.2f} s {len(subs) / secs * 60:6.1f}/min"
      f"  hanging ones' trial time {cost} (tests over budget {over})  correct below 100: {wrong}")
PY
}
uptime
for rep in $(seq "$reps"); do
  for side in $sides; do
    fencelab=${side#*=} name=${side%%=*}
    run "$name"_default "$work"/class/*.rs
    [ -n "${QUICK:-}" ] || run "$name"_no_budget "$work"/class/*.rs --budget 100000
    run "$name"_without_hangs $(ls "$work"/class/*.rs | grep -v hangs)
  done
done
uptime
