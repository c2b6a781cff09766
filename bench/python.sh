#!/bin/sh
# The Python edition beside the Rust one, side by side in one run: the same
# three mutants verified against each reference (at the same time, so under
# the same load), and the floor of one Python trial (an interpreter that
# starts, imports what the server needs and the reference). Run from the
# project: sh bench/python.sh (needs python3 >= 3.10 and a built fencelab).
set -eu
fencelab=${FENCELAB:-target/debug/fencelab}
out=$(mktemp -d)
mutants="enqueue-insert-or-replace claim-expiry-inclusive release-resets-fence"
"$fencelab" verify --python --exact $mutants --json "$out/py.json" -q >/dev/null &
"$fencelab" verify --exact $mutants --json "$out/rs.json" -q >/dev/null &
wait
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
for name in ("rs", "py"):
    d = json.load(open(f"{out}/{name}.json"))
    trials = [s for t in d["baseline"]["tests"] for s in t["secs"]]
    per_mutant = statistics.mean(m["secs"] for m in d["mutants"])
    print(f"{name}: total {d['secs']:.1f} s, baseline {d['baseline']['secs']:.1f} s, "
          f"median trial {statistics.median(trials):.2f} s, test-seconds per mutant {per_mutant:.1f}")
PY
exe=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
/usr/bin/time -f "floor of one Python server: %e s wall, %U+%S s CPU" "$exe" -IS -c \
  "import json, socket, struct, threading, traceback, types, sqlite3, concurrent.futures; exec(compile(open('python/lease.py').read(), 'lease.py', 'exec'), {})"
rm -rf "$out"
