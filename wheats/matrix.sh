#!/usr/bin/env bash
# Runs the over-specified learner tests (tests/fixtures/learner_tests/over_specified.rs)
# against the reference (src/lease.rs), every full wheat (wheats/*.rs) and every
# variant (a wheats/<id>.toml with find and replace, applied to src/lease.rs by
# wheats/variants.py), and prints two matrices: one row per test (with its
# freedom) and one column per implementation for the reference and the full
# wheats; one row per variant and one column per test for the variants.
#
# Usage: wheats/matrix.sh [WORKDIR]   (default: a new directory under /tmp)
#
# It builds a throwaway cargo workspace in WORKDIR, outside the repository: a
# crate per implementation whose lib.rs is the implementation's file, and a crate
# per implementation whose test module is the fixture, with the implementation
# reachable as `crate::lease`. The variants' files are written to WORKDIR/variants
# (Python 3.11 or later). The repository's Cargo.lock pins the versions, so it
# builds offline once fencelab itself has been built.
#
# Exit status 0 when every test passes on the reference and fails on at least one
# full wheat that claims the test's freedom (in wheats/<id>.toml), and every
# variant fails exactly the tests of its own freedom and passes all the others;
# 1 otherwise. The run takes several minutes: the busy-timeout test holds a lock
# for 12 s on every implementation, and the implementations are run one after
# another.

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
wheats=("${impls[@]:1}")

rm -rf "$work/variants"
python3 "$repo/wheats/variants.py" "$work/variants"
variants=()
for file in "$work"/variants/*.rs; do
    [ -e "$file" ] && variants+=("$(basename "$file" .rs)")
done
impls+=("${variants[@]}")

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
    elif [ -e "$repo/wheats/$impl.rs" ]; then
        source_file="$repo/wheats/$impl.rs"
    else
        source_file="$work/variants/$impl.rs"
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

claims() { # the full wheats whose toml claims freedom $1
    for wheat in "${wheats[@]}"; do
        if grep -q -E "^freedoms = \[.*\"$1\"" "$repo/wheats/$wheat.toml"; then
            echo "$wheat"
        fi
    done
}

freedom_of() { # the one freedom variant $1 takes
    sed -n -E 's/^freedoms = \["([a-z0-9-]+)"\]$/\1/p' "$repo/wheats/$1.toml"
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
for impl in reference "${wheats[@]}"; do printf ' %-10s' "$impl"; done
printf '\n'
for row in "${rows[@]}"; do
    read -r test freedom <<<"$row"
    printf '%-20s %-58s' "$freedom" "$test"
    for impl in reference "${wheats[@]}"; do printf ' %-10s' "$(outcome "$test" "$impl")"; done
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
        echo "  !! $test passes on every full wheat that claims $freedom" >&2
        status=1
    fi
done

# The variants: a row each, a column per test (numbered as in the legend), the
# cell FAIL where the test failed; `*` marks the column of the variant's freedom.
echo
echo "variants (columns: the tests above, in order):"
for i in "${!rows[@]}"; do
    read -r test freedom <<<"${rows[$i]}"
    printf '  %2d %-20s %s\n' $((i + 1)) "$freedom" "$test"
done
printf '%-32s %-20s' variant freedom
for i in "${!rows[@]}"; do printf ' %5d' $((i + 1)); done
printf '\n'
for variant in "${variants[@]}"; do
    own=$(freedom_of "$variant")
    printf '%-32s %-20s' "$variant" "$own"
    wrong=()
    for row in "${rows[@]}"; do
        read -r test freedom <<<"$row"
        result=$(outcome "$test" "$variant")
        mark=' '
        [ "$freedom" = "$own" ] && mark='*'
        cell=.
        [ "$result" != pass ] && cell=$result
        printf ' %5s' "$mark$cell"
        if [ "$freedom" = "$own" ] && [ "$result" != FAIL ]; then
            wrong+=("$test ($result, expected FAIL)")
        elif [ "$freedom" != "$own" ] && [ "$result" != pass ]; then
            wrong+=("$test ($result, expected pass)")
        fi
    done
    printf '\n'
    for problem in "${wrong[@]}"; do
        echo "  !! $variant: $problem" >&2
        status=1
    done
done
for row in "${rows[@]}"; do
    read -r test freedom <<<"$row"
    taken=no
    for variant in "${variants[@]}"; do
        if [ "$(freedom_of "$variant")" = "$freedom" ]; then taken=yes; fi
    done
    if [ "$taken" = no ]; then echo "  (no variant takes $freedom)"; fi
done
echo "(workspace: $work)"
exit $status
