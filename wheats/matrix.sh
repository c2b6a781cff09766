#!/usr/bin/env bash
# Runs the over-specified learner tests (tests/fixtures/learner_tests/over_specified.rs)
# against the reference (src/lease.rs) and every wheat (wheats/*.rs), and prints
# the matrix: one row per test (with its freedom), one column per implementation.
#
# Usage: wheats/matrix.sh [WORKDIR]   (default: a new directory under /tmp)
#
# It builds a throwaway cargo workspace in WORKDIR, outside the repository: a
# crate per implementation whose lib.rs is the implementation's file, and a crate
# per implementation whose test module is the fixture, with the implementation
# reachable as `crate::lease`. The repository's Cargo.lock pins the versions, so
# it builds offline once fencelab itself has been built.
#
# Exit status 0 when every test passes on the reference and fails on at least one
# wheat that claims the test's freedom (in wheats/<id>.toml), 1 otherwise.
# The run takes a couple of minutes: the busy-timeout test holds a lock for 12 s
# on every implementation, and the implementations are run one after another.

set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/wheat-matrix.XXXXXX)}
fixture="$repo/tests/fixtures/learner_tests/over_specified.rs"
mkdir -p "$work"
cd "$work"

impls=(reference)
for file in "$repo"/wheats/*.rs; do
    impls+=("$(basename "$file" .rs)")
done

crate_ident() { printf '%s' "$1" | tr -- '-' '_'; }

cat >Cargo.toml <<'EOF'
[workspace]
resolver = "3"
members = ["impls/*", "runners/*"]
EOF
cp "$repo/Cargo.lock" Cargo.lock

for impl in "${impls[@]}"; do
    ident=$(crate_ident "$impl")
    if [ "$impl" = reference ]; then
        source_file="$repo/src/lease.rs"
    else
        source_file="$repo/wheats/$impl.rs"
    fi
    mkdir -p "impls/$impl" "runners/$impl/src" "runners/$impl/tests"
    cat >"impls/$impl/Cargo.toml" <<EOF
[package]
name = "impl_$ident"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "$source_file"

[dependencies]
rusqlite = { version = "0.43.0", features = ["bundled"] }
EOF
    cat >"runners/$impl/Cargo.toml" <<EOF
[package]
name = "run_$ident"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
impl_$ident = { path = "../../impls/$impl" }
rusqlite = { version = "0.43.0", features = ["bundled"] }
tempfile = "3.27.0"
EOF
    : >"runners/$impl/src/lib.rs"
    cat >"runners/$impl/tests/over.rs" <<EOF
use impl_$ident as lease;

#[path = "$fixture"]
mod over_specified;
EOF
done

cargo build --offline --release --workspace --tests --quiet

for impl in "${impls[@]}"; do
    ident=$(crate_ident "$impl")
    cargo test --offline --release -p "run_$ident" --test over -- \
        --test-threads 8 >"out-$impl.txt" 2>/dev/null || true
done

# The test functions, each with the freedom named in the comment above it.
mapfile -t rows < <(awk '
    /^\/\/ freedom: / { freedom = $3 }
    /^fn [a-z0-9_]+\(\)/ && freedom != "" {
        name = $2; sub(/\(.*/, "", name); print name, freedom; freedom = ""
    }' "$fixture")

claims() { # the wheats whose toml claims freedom $1
    grep -l -E "^freedoms = \[.*\"$1\"" "$repo"/wheats/*.toml 2>/dev/null |
        xargs -r -n1 basename | sed 's/\.toml$//'
}

outcome() { # pass, FAIL or ? for test $1 on implementation $2
    if grep -q "^test over_specified::$1 \.\.\. ok" "out-$2.txt"; then
        echo pass
    elif grep -q "^test over_specified::$1 \.\.\. FAILED" "out-$2.txt"; then
        echo FAIL
    else
        echo '?'
    fi
}

status=0
printf '%-20s %-58s' freedom test
for impl in "${impls[@]}"; do printf ' %-10s' "$impl"; done
printf '\n'
for row in "${rows[@]}"; do
    read -r test freedom <<<"$row"
    printf '%-20s %-58s' "$freedom" "$test"
    for impl in "${impls[@]}"; do printf ' %-10s' "$(outcome "$test" "$impl")"; done
    printf '\n'
    if [ "$(outcome "$test" reference)" != pass ]; then
        echo "  !! $test does not pass on the reference" >&2
        status=1
    fi
    caught=no
    for wheat in $(claims "$freedom"); do
        [ "$(outcome "$test" "$wheat")" = FAIL ] && caught=yes
    done
    if [ "$caught" = no ]; then
        echo "  !! $test passes on every wheat that claims $freedom" >&2
        status=1
    fi
done
echo "(workspace: $work)"
exit $status
