#!/usr/bin/env bash
# PrairieLearn's external grader runs this (the question's
# externalGradingOptions.entrypoint) for each submission, offline: it grades
# the one .rs file the student submitted (/grade/student) and writes
# PrairieLearn's results to /grade/results/results.json.
set -uo pipefail
ROOT="${FENCELAB_GRADE_ROOT:-/grade}"
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/env.sh"
student="$ROOT/student"
if [ -f "$student/src/lib.rs" ]; then
  target="$student"
else
  target=$(find "$student" -maxdepth 2 -type f -name '*.rs' | sort | head -n 1)
  target="${target:-$student/lib.rs}"
fi
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
"$HERE/fencelab" grade "$target" --prairielearn "$ROOT/results/results.json" "$@"
status=$?
if [ "$status" -le 3 ] && [ -s "$ROOT/results/results.json" ]; then exit 0; fi
exit "$status"
