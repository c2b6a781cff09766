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
  # One .rs or .py file (a learner's own test_*.py aside); of several, the
  # first by name, said in the log.
  files=$(find "$student" -maxdepth 2 -type f \( -name '*.rs' -o -name '*.py' \) ! -name 'test_*.py' | sort)
  target=$(printf '%s\n' "$files" | head -n 1)
  count=$(printf '%s\n' "$files" | grep -c . || true)
  if [ "$count" -gt 1 ]; then
    echo "fencelab: $count files were submitted; grading ${target#"$student"/} (submit one .rs or .py file)" >&2
  fi
  # None: fencelab says so in the results (score 0).
  target="${target:-$student/lib.rs}"
fi
# Graded from the submission's directory: the compiler names the file as
# the student knows it (lease.rs), not where the grader keeps it.
cd "$student" 2>/dev/null || true
case "$target" in "$student"/*) target="${target#"$student"/}" ;; esac
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
"$HERE/fencelab" grade "$target" --prairielearn "$ROOT/results/results.json" \
  --course "$HERE/course.toml" "$@"
status=$?
if [ "$status" -le 3 ] && [ -s "$ROOT/results/results.json" ]; then exit 0; fi
exit "$status"
