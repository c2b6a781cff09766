//! Submissions graded together stay apart: one cannot replace the judge or
//! its output, the grader's environment does not reach them, identical files
//! are each graded, and grading twice gives the same result.

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
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(
        report.contains("InvalidParameterName") || report.contains("TMPDIR="),
        "the leak ran: {report}"
    );
    assert!(!report.contains("s3cr3t-token"), "the secret leaked");
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

#[test]
fn grading_twice_gives_the_same_result() {
    let files = [made_file("release_resets_fence.rs"), made_file("abort.rs")];
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("g.json").display().to_string();
        let (exit, _, _) = grade(&[&files[0], &files[1], "--json", &json]);
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let outcomes: Vec<(String, String)> = report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tests"].as_array().unwrap().iter())
            .map(|t| {
                (
                    t["test"].as_str().unwrap().to_string(),
                    t["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (exit, outcomes)
    };
    assert_eq!(run(), run());
}
