#!/usr/bin/env bash
# What a course waits for, measured as a new user would on this machine, side
# by side in one run (medians of REPS, wall clock), each beside its floor:
# what one incremental build plus one in-process run of the suite costs here.
#
#   bench/course.sh [REPS]          (default 3; the cold check runs once)
#
# - first check in a new lab, cold cache (SQLite compiled: once per machine);
# - first check in a second lab, warm cache (goal: under 15 s);
# - one warm grade of one submission;
# - a batch of 100 distinct submissions in one grade call (60 correct, 25
#   broken, 10 that do not compile, 5 that hang), in submissions per minute
#   (goal: at least 80 on 2 cores);
# - warm verify (goal: within 1.5x its floor).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release --quiet
fencelab="$PWD/target/release/fencelab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
timed() { # name command...
  local t0 t1
  t0=$(now); "${@:2}" >/dev/null 2>&1 || true; t1=$(now)
  echo "$1 $(python3 -c "print(f'{$t1 - $t0:.3f}')")" >> "$work/times"
}
lab() { # dir: a lab crate with the reference as its src/lib.rs
  "$fencelab" new "$1" --lang en >/dev/null 2>&1
  cp src/lease.rs "$1/src/lib.rs"
}

# The first check, cold: a cache of its own, empty.
lab "$work/lab-cold"
( cd "$work/lab-cold" && timed first_check_cold "$fencelab" check --cache "$work/cache" )
# A second lab on the same (now warm) cache.
for rep in $(seq "$reps"); do
  lab "$work/lab-second-$rep"
  ( cd "$work/lab-second-$rep" && timed first_check_warm "$fencelab" check --cache "$work/cache" )
done

# The batch: 100 distinct files (each with a comment of its own).
mkdir -p "$work/class"
python3 - "$work/class" <<'PY'
import sys, pathlib, re, tomllib
out = pathlib.Path(sys.argv[1])
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
kinds = [("correct", correct, 60), ("broken", broken, 25), ("nocompile", not_compiling, 10), ("hangs", hanging, 5)]
n = 0
for kind, sources, count in kinds:
    for i in range(count):
        src = sources[i % len(sources)]
        (out / f"s{n:03}-{kind}.rs").write_text(src + f"\n// submission {n}\n")
        n += 1
PY
# Warm the batch's builds once (a course grades, fixes the grader, grades again).
"$fencelab" grade "$work"/class/*.rs >/dev/null 2>&1 || true
for rep in $(seq "$reps"); do
  timed one_grade "$fencelab" grade src/lease.rs
  timed batch_100 "$fencelab" grade "$work"/class/*.rs
  timed verify "$fencelab" verify
done

# The floors: one incremental build of the suite and one in-process run of it.
lab "$work/lab-floor"
( cd "$work/lab-floor" && CARGO_TARGET_DIR="$PWD/../floor-target" cargo test --offline --release --no-run --quiet >/dev/null 2>&1 )
for rep in $(seq "$reps"); do
  touch "$work/lab-floor/src/lib.rs"
  ( cd "$work/lab-floor" && CARGO_TARGET_DIR="$PWD/../floor-target" timed floor_build cargo test --offline --release --no-run --quiet )
  ( cd "$work/lab-floor" && CARGO_TARGET_DIR="$PWD/../floor-target" timed floor_suite cargo test --offline --release --quiet --test behaviour )
done
mutants=$(find mutants -name '*.toml' | wc -l)
python3 - "$work/times" "$mutants" "$(nproc)" <<'PY'
import sys, statistics
from collections import defaultdict
t = defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v))
mutants, cores = int(sys.argv[2]), int(sys.argv[3])
m = {k: statistics.median(v) for k, v in t.items()}
one = m["floor_build"] + m["floor_suite"]
rows = [
    ("first check, new lab, cold cache (once)", m["first_check_cold"], one, ""),
    ("first check, second lab, warm cache", m["first_check_warm"], one, "goal < 15 s"),
    ("one warm grade", m["one_grade"], one, ""),
    ("100 submissions in one grade call", m["batch_100"], 100 * one / cores,
     f"{100 / m['batch_100'] * 60:.0f} subs/min, goal >= 80"),
    (f"warm verify ({mutants} mutants)", m["verify"], m["floor_build"] + (mutants + 1) * m["floor_suite"] / cores, "goal <= 1.5x floor"),
]
print(f"{'':44} {'wall s':>8} {'floor s':>8} {'ratio':>6}")
for name, wall, floor, note in rows:
    print(f"{name:44} {wall:8.2f} {floor:8.2f} {wall / floor:6.2f}  {note}")
print(f"floor parts: incremental build {m['floor_build']:.2f} s, in-process suite run {m['floor_suite']:.2f} s, {cores} cores")
print("raw:", {k: [round(x, 2) for x in v] for k, v in t.items()})
PY
