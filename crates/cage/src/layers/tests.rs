//! Which layer a test needs, what a missing one is said as, and the hook that
//! makes a missing layer fail a test rather than skip it.

use super::*;
use std::process::Command;

#[test]
fn a_test_names_the_first_layer_it_needs_that_is_missing() {
    let full = Layers {
        namespaces: true,
        landlock: Some(6),
        memory: true,
        space: true,
    };
    let all = [
        Need::Namespaces,
        Need::Landlock,
        Need::Landlock6,
        Need::Memory,
        Need::Space,
    ];
    assert_eq!(full.missing(&all), None);
    let old = Layers {
        landlock: Some(4),
        ..full
    };
    assert_eq!(old.missing(&[Need::Landlock]), None);
    assert_eq!(old.missing(&all), Some("Landlock ABI 6"));
    let bare = Layers {
        namespaces: false,
        landlock: None,
        memory: false,
        space: false,
    };
    assert_eq!(bare.missing(&all), Some("user namespaces"));
    assert_eq!(
        bare.missing(&[Need::Memory, Need::Space]),
        Some("a writable memory cgroup")
    );
}

/// Run by `a_required_cage_fails_a_test_whose_layer_is_missing` in a
/// child that pretends the namespaces are missing.
#[test]
#[ignore = "run by a_required_cage_fails_a_test_whose_layer_is_missing"]
fn needs_namespaces() {
    // `cargo test -- --ignored` (.ci/run step 2) runs it too: nothing
    // pretends then.
    if std::env::var_os(SIMULATE_MISSING_ENV).is_none() {
        return;
    }
    if Layers::test_needs(&[Need::Namespaces]) {
        panic!("ran, where the namespaces are said to be missing");
    }
}

#[test]
fn a_required_cage_fails_a_test_whose_layer_is_missing() {
    let run = |require: &str| {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "layers::tests::needs_namespaces"])
            .args(["--ignored", "--nocapture", "--test-threads", "1"])
            .env(SIMULATE_MISSING_ENV, "namespaces")
            .env(REQUIRE_CAGE_ENV, require)
            .output()
            .unwrap()
    };
    let skipped = run("0");
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stderr}");
    assert!(
        stderr.contains("skipped: this test needs user namespaces"),
        "{stderr}"
    );
    let failed = run("1");
    let out = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "{out}");
    assert!(out.contains("this test needs user namespaces"), "{out}");
    assert!(out.contains("FENCELAB_REQUIRE_CAGE=1"), "{out}");
}

#[test]
fn a_missing_memory_cgroup_or_space_is_said_in_english_and_japanese() {
    let all = Layers {
        namespaces: true,
        landlock: Some(6),
        memory: true,
        space: true,
    };
    assert!(all.not_enforced().is_empty());
    let gaps = Layers {
        memory: false,
        space: false,
        ..all
    }
    .not_enforced();
    assert_eq!(gaps.len(), 2, "{gaps:?}");
    assert_eq!(
        gaps[0].0,
        "memory across a trial's processes: not bounded (no writable memory cgroup)"
    );
    assert!(gaps[0].1.contains("cgroup") && gaps[1].1.contains("256 MiB"));
    assert!(gaps[1].0.starts_with("total space per trial: not bounded"));
}
