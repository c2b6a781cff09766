//! Submissions graded together stay apart: one cannot replace the judge or
//! its output, the grader's environment does not reach them, identical files
//! are each graded, and grading twice gives the same result (the racy ones
//! here, with two plainer ones in `.ci/run`'s second step).

use std::process::Command;

use serde_json::Value;

use super::{grade, made_file};
use crate::common::{fixture, root};

#[test]
fn a_submission_cannot_replace_the_judge_or_its_output_for_this_run_or_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json").display().to_string();
    let (forger, broken) = (made_file("forger.rs"), made_file("release_resets_fence.rs"));
    let (_, _, stderr) = grade(&[&forger, &broken, "--json", &json]);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{stderr}")),
    )
    .unwrap();
    let score = |name: &str| {
        report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().ends_with(name))
            .unwrap()["score"]
            .as_f64()
            .unwrap()
    };
    assert!(
        score("release_resets_fence.rs") < 100.0,
        "the broken submission is still judged"
    );
    // The next run uses the same judge: it must still be the real one.
    let (exit, _, _) = grade(&[&broken, "--min-score", "100"]);
    assert_eq!(
        exit, 1,
        "a later run still finds the broken submission below the gate"
    );
}

#[test]
fn the_graders_environment_does_not_reach_a_submission() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["grade", &made_file("leaks_environment.rs"), "--json", &json])
        .env("FENCELAB_TEST_SECRET", "s3cr3t-token")
        .env("PATH", crate::common::graders_path())
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(
        report.contains("InvalidParameterName") || report.contains("TMPDIR="),
        "the leak ran: {report}"
    );
    // What the implementation saw is the trial's own and the system's: its
    // places, the system's PATH, the locale; not the grader's secret, PATH
    // or home, and nothing of fencelab's (the server's path and key).
    let names: Vec<&str> = report
        .split([' ', '"', '('])
        .filter_map(|word| word.split_once('=').map(|(name, _)| name))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect();
    assert!(names.contains(&"TMPDIR"), "{report}");
    for name in &names {
        assert!(
            ["HOME", "TMPDIR", "PATH", "LANG", "RUST_BACKTRACE"].contains(name)
                || name.starts_with("LC_"),
            "{name} reached the implementation: {report}"
        );
    }
    assert!(
        report.contains(&format!("PATH={}", crate::common::SYSTEM_PATH)),
        "{report}"
    );
    for secret in ["s3cr3t-token", "grader-7c1e", "FENCELAB_", ".cargo"] {
        assert!(!report.contains(secret), "{secret} leaked: {report}");
    }
}

#[test]
fn identical_submissions_are_graded_each() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("alice.rs"), dir.path().join("bob.rs"));
    std::fs::copy(fixture("alternative.rs"), &a).unwrap();
    std::fs::copy(fixture("alternative.rs"), &b).unwrap();
    let (exit, stdout, stderr) = grade(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--min-score",
        "100",
    ]);
    assert_eq!(exit, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches("score 100.00 / 100").count(), 2, "{stdout}");
}

/// Judged twice, the same files get the same report, timings aside: every
/// outcome, score and message. The quick form: the two that break
/// claim_many's race (a claim that reads before it locks, answers in reverse
/// order), whose failures would otherwise depend on which owner won or how
/// many did.
#[test]
fn grading_the_racy_ones_twice_gives_the_same_result() {
    same_result_twice(&["reads_before_locking.rs", "answers_reversed.rs"]);
}

/// The full form, `.ci/run`'s second step: two plainer failures beside them.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn grading_twice_gives_the_same_result() {
    same_result_twice(&[
        "release_resets_fence.rs",
        "abort.rs",
        "reads_before_locking.rs",
        "answers_reversed.rs",
    ]);
}

/// The made submissions `names` graded twice: the same report, and each
/// racy one caught (as its fixture says) on both runs.
fn same_result_twice(names: &[&str]) {
    let files: Vec<String> = names.iter().map(|n| made_file(n)).collect();
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("g.json").display().to_string();
        let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
        args.extend(["--json", &json]);
        let (exit, _, _) = grade(&args);
        let mut report: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        without_timings(&mut report);
        (exit, report)
    };
    let (first, second) = (run(), run());
    let failing = |report: &Value, name: &str| -> usize {
        report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"].as_str().unwrap().ends_with(name))
            .flat_map(|s| s["tests"].as_array().unwrap().iter())
            .filter(|t| t["outcome"] != "passed")
            .count()
    };
    for name in ["reads_before_locking.rs", "answers_reversed.rs"] {
        assert!(failing(&first.1, name) > 0, "{name} fails some test");
    }
    assert_eq!(first, second);
}

/// `report` without its timings (every `secs`), which differ from run to run.
fn without_timings(report: &mut Value) {
    match report {
        Value::Object(map) => {
            map.remove("secs");
            map.values_mut().for_each(without_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(without_timings),
        _ => {}
    }
}
