//! What `grade` writes for the platforms that run it, from runs of their own:
//! one submission's results as Gradescope, PrairieLearn and GitHub Classroom
//! read them (and refused for several), shards graded apart and merged into
//! one report, and GitHub's step summary with and without the variable.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{grade, grade_env, made_file};
use crate::common::{fixture, root};

#[test]
fn one_submissions_results_are_what_gradescope_prairielearn_and_classroom_read() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.json");
    let pl = dir.path().join("pl.json");
    let output = dir.path().join("github_output");
    std::fs::write(&output, "earlier=1\n").unwrap();
    let (out_arg, pl_arg) = (out.display().to_string(), pl.display().to_string());
    let file = made_file("release_resets_fence.rs");
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &[
            &file,
            "--gradescope",
            &out_arg,
            "--gradescope-visibility",
            "after_published",
            "--prairielearn",
            &pl_arg,
            "--classroom",
        ],
        &[("GITHUB_OUTPUT", output.as_os_str())],
    );
    assert_eq!(exit, 0, "{stderr}");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(results["visibility"], "after_published");
    assert_eq!(results["stdout_visibility"], "hidden");
    assert_eq!(results["output_format"], "md");
    assert!(results["execution_time"].is_u64());
    let tests = results["tests"].as_array().unwrap();
    assert_eq!(tests.len(), fencelab::lab::suite::tests().len());
    for t in tests {
        for field in [
            "name",
            "number",
            "score",
            "max_score",
            "status",
            "tags",
            "output",
        ] {
            assert!(t.get(field).is_some(), "{field} in {t}");
        }
    }
    // Per test, hundredths of a point, never more than the test's maximum;
    // the maxima add up to 100, the scores to the score.
    let hundredths = |x: &Value| (x.as_f64().unwrap() * 100.0).round() as i64;
    let score = hundredths(&results["score"]);
    assert!(
        tests
            .iter()
            .all(|t| hundredths(&t["score"]) <= hundredths(&t["max_score"]))
    );
    let sum = |key: &str| tests.iter().map(|t| hundredths(&t[key])).sum::<i64>();
    assert_eq!((sum("score"), sum("max_score")), (score, 10_000));
    let failed: Vec<&Value> = tests.iter().filter(|t| t["status"] == "failed").collect();
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|t| t["tags"][0] == "step7" && t["number"].as_str().unwrap().starts_with("7."))
    );

    let pl: Value = serde_json::from_str(&std::fs::read_to_string(&pl).unwrap()).unwrap();
    assert_eq!(pl["gradable"], true);
    assert!(
        (pl["score"].as_f64().unwrap() * 100.0 - results["score"].as_f64().unwrap()).abs() < 1e-9
    );
    let pl_tests = pl["tests"].as_array().unwrap();
    let pl_sum = |key: &str| pl_tests.iter().map(|t| hundredths(&t[key])).sum::<i64>();
    assert_eq!((pl_sum("points"), pl_sum("max_points")), (score, 10_000));

    // Classroom's result: appended to $GITHUB_OUTPUT as `result=` base64 JSON.
    let lines = std::fs::read_to_string(&output).unwrap();
    let mut lines = lines.lines();
    assert_eq!(lines.next(), Some("earlier=1"), "appended, not overwritten");
    let b64 = lines.next().unwrap().strip_prefix("result=").unwrap();
    assert_eq!(lines.next(), None, "on one line");
    let result: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["version"], 1);
    assert_eq!(result["max_score"], 100.0);
    assert_eq!(result["status"], "pass", "the gate is 0 by default");
    let total = result["tests"]
        .as_array()
        .unwrap()
        .iter()
        .fold(0.0, |a, t| a + t["score"].as_f64().unwrap());
    assert_eq!(total, results["score"].as_f64().unwrap());
}

#[test]
fn one_format_per_submission_is_refused_for_several() {
    let files = [
        fixture("alternative.rs").display().to_string(),
        made_file("abort.rs"),
    ];
    let output = tempfile::NamedTempFile::new().unwrap();
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &[&files[0], &files[1], "--classroom"],
        &[("GITHUB_OUTPUT", output.path().as_os_str())],
    );
    assert_eq!(exit, 2);
    assert!(
        stderr.contains("--classroom writes the results of one submission, and 2 are graded here"),
        "{stderr}"
    );
    let (exit, _, stderr) = grade(&[&files[0], "--classroom"]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("$GITHUB_OUTPUT, which is not set"),
        "{stderr}"
    );
}

#[test]
fn shards_split_the_submissions_between_runners() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for k in 1..=2 {
        let json = dir.path().join(format!("{k}.json")).display().to_string();
        let files = [
            fixture("alternative.rs").display().to_string(),
            root().join("src/lease.rs").display().to_string(),
            made_file("release_resets_fence.rs"),
        ];
        let shard = format!("{k}/2");
        let (exit, _, stderr) = grade(&[
            &files[0], &files[1], &files[2], "--shard", &shard, "--json", &json,
        ]);
        assert_eq!(exit, 0, "{stderr}");
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        seen.extend(
            report["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_string()),
        );
    }
    seen.sort();
    assert_eq!(seen.len(), 3, "{seen:?}");
    seen.dedup();
    assert_eq!(seen.len(), 3, "no submission in two shards");

    // The shards merge into one report, from which every format is written.
    let (one, two) = (dir.path().join("1.json"), dir.path().join("2.json"));
    let (merged, junit, csv) = (
        dir.path().join("merged.json"),
        dir.path().join("merged.xml"),
        dir.path().join("merged.csv"),
    );
    let (exit, stdout, stderr) = grade(&[
        "--merge",
        two.to_str().unwrap(),
        one.to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(exit, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let names: Vec<String> = report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, seen, "every submission once, in grading order");
    assert_eq!(report["shard"], Value::Null);
    roxmltree::Document::parse(&std::fs::read_to_string(&junit).unwrap()).unwrap();
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        csv::Reader::from_reader(csv_text.as_bytes())
            .records()
            .count(),
        3
    );
    // A shard graded by another suite is refused, naming it and the difference.
    let mut other: Value = serde_json::from_str(&std::fs::read_to_string(&two).unwrap()).unwrap();
    other["suite"] = "sha256:0123".into();
    std::fs::write(&two, other.to_string()).unwrap();
    let (exit, _, stderr) = grade(&["--merge", one.to_str().unwrap(), two.to_str().unwrap()]);
    assert_eq!(exit, 2);
    assert!(
        stderr.contains("2.json: graded with suite sha256:0123, but") && stderr.contains("next:"),
        "{stderr}"
    );
}

/// A report of one submission, as `grade --json` writes it, for what `--merge`
/// writes from it without grading anything.
fn one_report(dir: &Path) -> PathBuf {
    let steps: Vec<Value> = fencelab::lab::worksheet::SLUGS
        .iter()
        .enumerate()
        .map(|(i, slug)| {
            serde_json::json!({
                "step": i + 1, "slug": slug, "passed": 0, "total": 2, "score": 0.0,
            })
        })
        .collect();
    let report = serde_json::json!({
        "schema": 1,
        "fencelab_version": env!("CARGO_PKG_VERSION"),
        "suite": "sha256:x",
        "min_score": 0.0,
        "test_limit_secs": 10.0,
        "build_limit_secs": 600.0,
        "budget_secs": 15.0,
        "shard": null,
        "submissions": [{
            "name": "alice.rs",
            "file": "alice.rs",
            "score": 0.0,
            "passed_gate": false,
            "compile_errors": null,
            "unusable": "alice.rs does not have the contract's API",
            "steps": steps,
            "tests": [],
        }],
        // None could be graded at all.
        "exit_code": 2,
    });
    let path = dir.join("one.json");
    std::fs::write(&path, report.to_string()).unwrap();
    path
}

#[test]
fn github_without_a_step_summary_says_so_once_and_with_one_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let report = one_report(dir.path());
    let report = report.to_str().unwrap();
    let (exit, stdout, stderr) = grade(&["--merge", report, "--github"]);
    assert_eq!(exit, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("::error "),
        "the annotations are printed: {stdout}"
    );
    assert_eq!(
        stderr
            .matches("--github: $GITHUB_STEP_SUMMARY is not set, so no step summary was")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("next: run it as a step of a GitHub Actions job"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("## fencelab grade"),
        "not on stdout: {stdout}"
    );
    // With one, it is written there and nothing is said.
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "").unwrap();
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &["--merge", report, "--github"],
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_eq!(exit, 2);
    assert!(!stderr.contains("GITHUB_STEP_SUMMARY"), "{stderr}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("## fencelab grade: 0 of 1"),
        "{written}"
    );
}
