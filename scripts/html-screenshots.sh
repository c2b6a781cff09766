#!/usr/bin/env bash
# Renders `fencelab verify --html` in headless Chromium (Debian's `chromium`
# package: apt-get install -y chromium) and saves screenshots at two window
# widths, light and dark, to look at the page as an instructor would. CI does
# not run this (it has no browser): tests/cli/verify_outcomes/reports.rs checks the page's
# structure with an HTML parser.
#
#   scripts/html-screenshots.sh [REPORT.html] [OUT_DIR]
#
# Japanese text needs a CJK font (Debian: fonts-noto-cjk) or it shows as boxes.
# Without REPORT.html it runs `cargo run --release -- verify --html` first (the
# project's own mutants: a real-size page). OUT_DIR defaults to
# target/screenshots. Prints each PNG's path and size.
set -euo pipefail
cd "$(dirname "$0")/.."
report="${1:-}"
out="${2:-target/screenshots}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "error: no chromium on PATH" >&2
  echo "  next: apt-get install -y chromium (Debian's package), then run this again" >&2
  exit 2
fi
mkdir -p "$out"
if [ -z "$report" ]; then
  report="$out/verify.html"
  cargo run --release --quiet -- verify --html "$report" --lang "${LANG_REPORT:-en}" >/dev/null || true
fi
if [ ! -s "$report" ]; then
  echo "error: $report is missing or empty" >&2
  echo "  next: give a file written by \`fencelab verify --html FILE\`" >&2
  exit 2
fi
url="file://$(realpath "$report")"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
shoot() { # name width height hash
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" \
    --window-size="$2,$3" --screenshot="$out/$1.png" "$url$4" >/dev/null 2>&1
  echo "$out/$1.png $(stat -c %s "$out/$1.png") bytes ($2x$3${4:+, $4})"
}
shoot wide-light 1440 900 ""
shoot wide-dark 1440 900 "#dark"
shoot narrow-light 760 1000 ""
shoot narrow-dark 760 1000 "#dark"
# The whole page at once (summary, matrix, the tests that kill nothing, the
# mutants' details): headless Chromium does not paint a page scrolled to an
# anchor, so a tall window stands in for scrolling.
shoot tall-light 1440 4200 ""
