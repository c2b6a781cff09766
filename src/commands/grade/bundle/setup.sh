#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image
# (the zip's files are in /autograder/source).
set -euo pipefail
ROOT="${FENCELAB_AUTOGRADER_ROOT:-/autograder}"
chmod +x "$ROOT/source/prebuild.sh" "$ROOT/source/run_autograder"
"$ROOT/source/prebuild.sh"
