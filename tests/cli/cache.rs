//! One build cache for every lab crate: two lab crates made by `fencelab new`
//! share a cache (`--cache DIR`), checked at the same time; both runs succeed,
//! and SQLite is compiled once for both. `fencelab cache` says where the cache
//! is and `fencelab cache clean` empties it.
//!
//! On a cold cache that is minutes of building (SQLite above all), so it runs
//! in `.ci/run`'s second step; `cargo test` checks the same on the tests' warm
//! cache, and `cache` and `cache clean` on a small one.

use std::path::Path;
use std::process::{Command, Output};

fn fencelab(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencelab"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("FENCELAB_CACHE");
    command
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A lab crate whose src/lib.rs is the reference.
fn lab(parent: &Path, name: &str) -> std::path::PathBuf {
    let dir = parent.join(name);
    let out = fencelab(parent, &["new", name, "--lang", "en"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(dir.join("src/lib.rs"), fencelab::lab::reference::REFERENCE).unwrap();
    dir
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn two_labs_share_one_cache_and_two_runs_at_once_both_succeed() {
    let parent = tempfile::tempdir().unwrap();
    let cache = parent.path().join("cache");
    let cache_arg = cache.display().to_string();
    let (a, b) = (lab(parent.path(), "lab-a"), lab(parent.path(), "lab-b"));
    // Both at once, on a cold cache: one builds, the other waits for it.
    let runs: Vec<_> = [&a, &b]
        .iter()
        .map(|dir| {
            fencelab(dir, &["check", "--cache", &cache_arg])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains("8/8"), "{}", text(&out));
    }
    // Neither lab has a target directory of its own: the cache holds it all,
    // and SQLite was compiled once.
    assert!(!a.join("target").exists() && !b.join("target").exists());
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let sqlite_builds: Vec<_> = std::fs::read_dir(cache.join("target").join(profile).join("build"))
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("libsqlite3-sys-")
        })
        .filter(|e| e.path().join("output").exists())
        .collect();
    assert_eq!(
        sqlite_builds.len(),
        1,
        "SQLite compiled once: {sqlite_builds:?}"
    );
    // `cache` says where it is; `cache clean` empties it.
    let out = fencelab(&a, &["cache", "--cache", &cache_arg])
        .output()
        .unwrap();
    assert!(text(&out).contains(&cache_arg), "{}", text(&out));
    let out = fencelab(&a, &["cache", "clean", "--cache", &cache_arg])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!cache.exists(), "the cache is gone");
}

/// The quick form of the above for `cargo test`: two labs checked at once on
/// the tests' own warm cache (given as `CARGO_TARGET_DIR`, the place fencelab
/// looks after `--cache`) both succeed, and neither gets a target directory of
/// its own; `cache` names a cache given with `--cache`, and `cache clean`
/// removes it.
#[test]
fn two_labs_at_once_share_a_warm_cache_and_cache_clean_empties_one() {
    let parent = tempfile::tempdir().unwrap();
    let (a, b) = (lab(parent.path(), "lab-a"), lab(parent.path(), "lab-b"));
    let shared = crate::common::scratch().target_dir;
    let runs: Vec<_> = [&a, &b]
        .iter()
        .map(|dir| {
            fencelab(dir, &["check"])
                .env("CARGO_TARGET_DIR", &shared)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains("8/8"), "{}", text(&out));
    }
    assert!(!a.join("target").exists() && !b.join("target").exists());

    let cache = parent.path().join("cache");
    std::fs::create_dir_all(cache.join("target")).unwrap();
    std::fs::write(cache.join("target/built"), "x").unwrap();
    let cache_arg = cache.display().to_string();
    let out = fencelab(&a, &["cache", "--cache", &cache_arg])
        .output()
        .unwrap();
    assert!(text(&out).contains(&cache_arg), "{}", text(&out));
    let out = fencelab(&a, &["cache", "clean", "--cache", &cache_arg])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!cache.exists(), "the cache is gone");
}
