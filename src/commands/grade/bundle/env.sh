# Sourced by fencelab's autograder scripts: where cargo and the build cache
# are. HERE is the directory that holds fencelab and these scripts.
export PATH="$HOME/.cargo/bin:$PATH"
# The cache of pre-built crates (the suite, SQLite, the bridge) sits beside
# fencelab, unless the environment chooses one.
if [ -z "${FENCELAB_CACHE:-}" ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  export FENCELAB_CACHE="$HERE/cache"
fi
# The scratch workspace fencelab writes there (its Cargo.toml lists the
# crates to fetch).
WORKSPACE="${CARGO_TARGET_DIR:-${FENCELAB_CACHE:-}/target}/fencelab/ws"
