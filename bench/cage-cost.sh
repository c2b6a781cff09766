#!/usr/bin/env bash
# What the cage costs (issue 18): warm `grade` of one submission, a batch of
# 100, and `check --mine` of 20 tests, for an earlier revision beside a later
# one (the work tree), in one run, alternating before and after so that the
# machine's load falls on both alike: medians of REPS runs each, and ratios.
#
#   bench/cage-cost.sh BEFORE [REPS]        (REPS defaults to 3)
#   ONLY="mine" bench/cage-cost.sh BEFORE 7 (some of one, batch, mine)
#
# BEFORE is built in a temporary worktree with a target directory of its own
# (seeded with this tree's release build: same dependencies, not rebuilt).
# Both sides grade the same files, made from BEFORE's reference, mutants and
# fixtures (60 correct, 25 broken, 10 that do not compile, 5 that hang, as in
# course.sh), and judge the same 20 learner tests (as in mine.sh); each side
# has its own scratch builds and cache, warmed first.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?give the revision to compare with, e.g. ab09b17}
reps=${2:-3}
only=${ONLY:-one batch mine}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --quiet --detach "$work/before" "$rev"
cargo build --release --quiet
mkdir -p "$work/before-target"
cp -a target/release "$work/before-target/release"
( cd "$work/before" && CARGO_TARGET_DIR="$work/before-target" cargo build --release --quiet )
# Each side runs in a checkout of its own, with a cache of its own
# (FENCELAB_CACHE, below).
git worktree add --quiet --detach "$work/after" HEAD
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; git worktree remove --force "$work/after" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cp -a target/release/fencelab "$work/after-fencelab"
cp "$work/before-target/release/fencelab" "$work/before-fencelab"

# The batch, from BEFORE's files.
mkdir -p "$work/class"
( cd "$work/before" && python3 - "$work/class" <<'PY'
import sys, pathlib, tomllib
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
        (out / f"s{n:03}-{kind}.rs").write_text(sources[i % len(sources)] + f"\n// submission {n}\n")
        n += 1
PY
)
cp "$work/before/src/lease.rs" "$work/one.rs"

# The learner's 20 tests, in a lab each side makes for itself.
mine() { # side
  "$work/$1-fencelab" new "$work/lab-$1" --lang en >/dev/null 2>&1
  ( cd "$work/before" && python3 - "$work/lab-$1" <<'PY'
import re, sys, pathlib
lab = pathlib.Path(sys.argv[1])
mine = lab / "tests" / "mine"
suite = pathlib.Path("tests/behaviour")
root = pathlib.Path("tests/behaviour.rs").read_text()
root = "\n".join(l for l in root.splitlines() if not l.strip().startswith("#[path"))
root = root.replace("use fencelab::lease;", "use lab as lease;")
(mine / "main.rs").write_text(root + "\n")
for helper in ("support.rs", "random.rs"):
    if (suite / helper).exists():
        (mine / helper).write_text((suite / helper).read_text())
def split(text):
    # Each test with the doc comment and attributes above it.
    lines = text.split("\n")
    starts = []
    for i, line in enumerate(lines):
        if line.startswith("#[test]"):
            while i > 0 and lines[i - 1].startswith(("///", "#[")):
                i -= 1
            starts.append(i)
    ends = starts[1:] + [len(lines)]
    return "\n".join(lines[:starts[0]]), ["\n".join(lines[a:b]) for a, b in zip(starts, ends)]
def ignored(test):
    attributes = test.split("\nfn ", 1)[0]
    return "#[ignore" in attributes
per_step = {1: 3, 2: 2, 3: 2, 4: 4, 5: 3, 6: 2, 7: 2, 8: 2}   # 20 tests
for step, keep in per_step.items():
    head, tests = split((suite / f"step{step}.rs").read_text())
    kept = [t for t in tests if ignored(t)]
    plain = [t for t in tests if t not in kept][:keep]
    (mine / f"step{step}.rs").write_text("\n".join([head] + plain + kept) + "\n")
PY
  )
}
FENCELAB_CACHE="$work/cache-before" mine before
FENCELAB_CACHE="$work/cache-after" mine after

now() { date +%s.%N; }
timed() { # name dir command...
  local t0 t1
  t0=$(now); ( cd "$2" && "${@:3}" >/dev/null 2>&1 ) || true; t1=$(now)
  echo "$1 $(python3 -c "print(f'{$t1 - $t0:.3f}')")" >> "$work/times"
}
side() { # side (before|after) record (times file suffix or "warm")
  local bin="$work/$1-fencelab" tag=$2
  export FENCELAB_CACHE="$work/cache-$1"
  case " $only " in *" one "*) timed "one_$tag" "$work/$1" "$bin" grade "$work/one.rs";; esac
  case " $only " in *" batch "*) timed "batch_$tag" "$work/$1" "$bin" grade "$work"/class/*.rs;; esac
  case " $only " in *" mine "*) timed "mine_$tag" "$work/lab-$1" "$bin" check --mine;; esac
}
# Warm both: scratch builds of the batch, the lab's cache.
side before warm
side after warm
# The load beside the timed runs, said with the figures: a shared machine's
# load makes the medians noise, whatever the alternation.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq "$reps"); do
  side before before
  side after after
done
echo "load average (1, 5, 15 min): $load_start at the timed runs' start, $(cut -d' ' -f1-3 /proc/loadavg) at their end"
python3 - "$work/times" "$rev" "$(git rev-parse --short HEAD)" <<'PY'
import sys, statistics
from collections import defaultdict
t = defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v))
runs = max(len(v) for k, v in t.items() if k.endswith("_after"))
print(f"warm, medians of {runs} alternating runs; before {sys.argv[2]}, after {sys.argv[3]} + work tree")
print(f"{'':34}{'before s':>10}{'after s':>10}{'ratio':>8}")
for key, what in [("one", "grade, one submission"), ("batch", "grade, batch of 100"), ("mine", "check --mine, 20 tests")]:
    if f"{key}_before" not in t:
        continue
    b, a = statistics.median(t[f"{key}_before"]), statistics.median(t[f"{key}_after"])
    print(f"{what:34}{b:10.2f}{a:10.2f}{a / b:8.2f}")
for k in sorted(t):
    print(f"  {k}: {[round(x, 2) for x in t[k]]}")
PY
