#!/usr/bin/env bash
# The attack suite (tests/attacks/) run by an unprivileged user, as issue 18
# asks: the cage must hold whoever runs fencelab, root or not.
#
#   tests/unprivileged.sh            (as root; the user is created if missing)
#
# It creates the user `fencelab-attacker` (FENCELAB_CI_USER to change it),
# gives it copies of what it cannot read in root's home (the toolchain, the
# crates of cargo's registry: kept for the next run, refreshed) and a copy
# of this work tree (tracked and untracked files, not target/), then runs
# `cargo test --offline --test attacks` as that user, in its own target
# directory (the first run builds every dependency). Where it cannot create
# the user (not root, no useradd), it says so in one line and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${FENCELAB_CI_USER:-fencelab-attacker}
skip() { echo "skipped: the unprivileged attack suite $1"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root to create its user (run it as root)"
command -v useradd >/dev/null && command -v runuser >/dev/null ||
  skip "needs useradd and runuser to create and become its user"
if ! id "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/sh "$user" >/dev/null 2>&1 ||
    skip "cannot create the user $user here"
fi
[ "$(id -u "$user")" != 0 ] || skip "found $user with uid 0"
home=$(getent passwd "$user" | cut -d: -f6)
sysroot=$(rustc --print sysroot)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
# The toolchain, copied once (about 1.4 GB), again when rustc changes.
if [ "$("$home/toolchain/bin/rustc" --version 2>/dev/null)" != "$(rustc --version)" ]; then
  rm -rf "$home/toolchain.part" "$home/toolchain"
  cp -a "$sysroot" "$home/toolchain.part"
  mv "$home/toolchain.part" "$home/toolchain"
fi
# The registry, brought up to date on every run: the build is offline, and
# crates added since the last copy (the cage's `landlock`) must be there.
mkdir -p "$home/cargo-home/registry"
cp -a -u "$cargo_home/registry/." "$home/cargo-home/registry/"
# This work tree as it is now, without its target directory. Files of an
# older copy go first: one moved away (sandbox.rs) must not linger.
mkdir -p "$home/fencelab"
find "$home/fencelab" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -cf - | tar -xf - -C "$home/fencelab"
chown -R "$user:" "$home/toolchain" "$home/cargo-home" "$home/fencelab"
echo "running the attack suite as $user (uid $(id -u "$user"))"
start=$(date +%s)
status=0
runuser -u "$user" -- env -i \
  HOME="$home" \
  PATH="$home/toolchain/bin:/usr/local/bin:/usr/bin:/bin" \
  CARGO_HOME="$home/cargo-home" \
  bash -c 'cd ~/fencelab && cargo test --offline --test attacks' || status=$?
echo "the attack suite as $user: exit $status after $(($(date +%s) - start)) s"
exit "$status"
