#!/usr/bin/env bash
# Benchmark of `fencelab verify` against cargo-mutants and against the floor,
# side by side in one run on this machine (wall-clock times, medians of REPS).
#
#   bench/verify.sh [REPS]        (default 3; cargo-mutants runs once per rep too)
#
# - verify (warm): `target/release/fencelab verify` with its scratch build fresh;
# - verify (rebuild): the same after removing the scratch workspace's crates, so
#   the judge and every implementation are compiled again (dependencies reused);
# - cargo-mutants, on equal terms: in a lab crate made by `fencelab new` with the
#   reference as its src/lib.rs (just the contract and the suite),
#   `cargo mutants --file src/lib.rs -- --test behaviour` (it builds the crate
#   again for each of its mutants; in fencelab's own tree it would rebuild all
#   of fencelab); installs cargo-mutants with `cargo install` if missing;
# - floor: one incremental build of the suite after a change to src/lease.rs,
#   plus one in-process run of the suite per implementation (the reference and
#   each mutant), spread over the cores.
# Each is reported per mutant (cargo-mutants finds its own mutants; we have ours).
set -euo pipefail
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
reps=${1:-3}
cores=$(nproc)
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
cargo build --release --quiet
cargo test --no-run --quiet --test behaviour 2>/dev/null
ours=$(find mutants -name '*.toml' | wc -l)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }

# The lab crate for cargo-mutants: what a learner (or an instructor) has.
target/release/fencelab new "$work/lab" --lang en >/dev/null 2>&1
cp src/lease.rs "$work/lab/src/lib.rs"
( cd "$work/lab" && CARGO_TARGET_DIR="$work/lab-target" cargo test --offline --no-run --quiet 2>/dev/null )

target/release/fencelab verify --color never >/dev/null 2>&1 || true   # warm the scratch build
behaviour=$(find target/debug/deps -name 'behaviour-*' -type f -executable -printf '%T@ %p\n' | sort -rn | awk 'NR == 1 { print $2 }')

for rep in $(seq "$reps"); do
  t0=$(now); target/release/fencelab verify --color never >/dev/null 2>&1; t1=$(now)
  echo "verify_warm $(elapsed "$t0" "$t1")" >> "$work/times"

  rm -rf target/fencelab/ws/crates
  t0=$(now); target/release/fencelab verify --color never >/dev/null 2>&1; t1=$(now)
  echo "verify_rebuild $(elapsed "$t0" "$t1")" >> "$work/times"

  t0=$(now)
  ( cd "$work/lab" && CARGO_TARGET_DIR="$work/lab-target" cargo mutants --file src/lib.rs --no-shuffle -- --test behaviour > "$work/cm.log" 2>&1 ) || true
  t1=$(now)
  echo "cargo_mutants $(elapsed "$t0" "$t1")" >> "$work/times"
  found=$(grep -oE 'Found [0-9]+ mutants' "$work/cm.log" | grep -oE '[0-9]+')
  echo "cm_found $found" >> "$work/times"

  # The floor: an incremental rebuild of the suite after touching lease.rs...
  touch src/lease.rs
  t0=$(now); cargo test --no-run --quiet --test behaviour 2>/dev/null; t1=$(now)
  build=$(elapsed "$t0" "$t1")
  # ...and one in-process run of the suite.
  t0=$(now); "$behaviour" -q >/dev/null 2>&1; t1=$(now)
  suite=$(elapsed "$t0" "$t1")
  echo "floor_build $build" >> "$work/times"
  echo "floor_suite $suite" >> "$work/times"
done

python3 - "$work/times" "$ours" "$cores" <<'PY'
import sys, statistics
from collections import defaultdict
times = defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    times[k].append(float(v))
ours, cores = int(sys.argv[2]), int(sys.argv[3])
med = {k: statistics.median(v) for k, v in times.items()}
cm_found = int(med["cm_found"])
floor = med["floor_build"] + (ours + 1) * med["floor_suite"] / cores
rows = [
    ("fencelab verify, warm", med["verify_warm"], ours),
    ("fencelab verify, scratch crates rebuilt", med["verify_rebuild"], ours),
    ("cargo mutants, in a lab crate (equal terms)", med["cargo_mutants"], cm_found),
    ("floor: 1 incremental build + 1 suite run per impl / %d cores" % cores, floor, ours),
]
print(f"{'':62} {'wall s':>8} {'mutants':>8} {'s/mutant':>9}")
for name, wall, n in rows:
    print(f"{name:62} {wall:8.2f} {n:8d} {wall / n:9.3f}")
per = {name: wall / n for name, wall, n in rows}
print()
print(f"verify warm / cargo-mutants, per mutant: {per[rows[0][0]] / per[rows[2][0]]:.2f} (target <= 0.3)")
print(f"verify warm / floor:                     {med['verify_warm'] / floor:.2f} (target <= 1.5)")
print(f"floor parts: incremental build {med['floor_build']:.2f}s, suite run {med['floor_suite']:.2f}s")
print("raw:", {k: [round(x, 2) for x in v] for k, v in times.items()})
PY
