# Sourced by the bench scripts that run fencelab on this checkout's target:
# the tests' keep (.cargo/config.toml's [env], which fencelab run directly
# does not get); the default collector would remove scratch crates that the
# next `cargo test` then builds again.
export FENCELAB_GC_KEEP="${FENCELAB_GC_KEEP:-256}"
