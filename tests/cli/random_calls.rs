//! Each step's test of random calls (`tests/behaviour/random.rs`): bugs
//! nobody wrote a test for fail with the shortest story, in the learner's
//! edition and language, the same on every run; every correct
//! implementation agrees with the contract on every sequence.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{changed, changed_reference, fixture, root};

/// `fencelab grade FILES --json` at 80 columns in `lang`: the report and
/// what it printed.
fn grade(files: &[PathBuf], lang: &str, args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grade.json");
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("grade")
        .args(files)
        .args(args)
        .arg("--json")
        .arg(&json)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .env("LC_ALL", lang)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("no report: {out:?}"));
    (serde_json::from_str(&text).unwrap(), printed)
}

/// The two untidy implementations of the issue, in `edition` (`rs`, `py`),
/// written in `dir`.
fn untidy(dir: &Path, edition: &str) -> Vec<PathBuf> {
    ["complete_trims", "enqueue_lowercases"]
        .iter()
        .map(|name| {
            let source = match edition {
                "rs" => changed_reference(&fixture(&format!("{name}.toml"))).1,
                _ => {
                    let python = std::fs::read_to_string(root().join("python/lease.py")).unwrap();
                    let change = root().join(format!("tests/fixtures/python/{name}.toml"));
                    changed(&change, &python).1
                }
            };
            let file = dir.join(format!("{name}.{edition}"));
            std::fs::write(&file, source).unwrap();
            file
        })
        .collect()
}

/// The one test a submission fails: its name and message.
fn failing(submission: &Value) -> (String, String) {
    let failed: Vec<&Value> = submission["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["outcome"] != "passed")
        .collect();
    assert_eq!(failed.len(), 1, "{submission}");
    let t = failed[0];
    (
        t["test"].as_str().unwrap().to_string(),
        t["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn untidy_implementations_fail_with_a_story_of_three_calls_at_most() {
    let dir = tempfile::tempdir().unwrap();
    for edition in ["rs", "py"] {
        let files = untidy(dir.path(), edition);
        let (report, _) = grade(&files, "C", &[]);
        let (again, _) = grade(&files, "C", &[]);
        for (submission, twice) in report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .zip(again["submissions"].as_array().unwrap())
        {
            let name = submission["name"].as_str().unwrap();
            let step = if name.contains("complete") { 6 } else { 2 };
            let (test, message) = failing(submission);
            assert_eq!(
                test,
                format!("step{step}::random_calls_agree_with_the_contract")
            );
            assert!(submission["score"].as_f64().unwrap() < 100.0, "{name}");
            // The story: at most three calls after init_db, the last the
            // step's own.
            let story = message
                .lines()
                .find(|l| l.starts_with("observation: "))
                .unwrap_or_default();
            let calls = story.matches(") -> ").count() + 1;
            assert!(calls <= 4, "{name}: {calls} calls: {story}");
            let function = if step == 6 {
                "complete(db"
            } else {
                "enqueue(db"
            };
            assert!(
                story.starts_with(&format!("observation: stored rows after {function}")),
                "{story}"
            );
            // The same verdict and story on every run.
            assert_eq!(failing(twice), (test, message), "{name}");
        }
    }
}

#[test]
fn a_story_in_both_languages_and_both_editions_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = String::new();
    for edition in ["rs", "py"] {
        let files = untidy(dir.path(), edition);
        for lang in ["C", "ja_JP.UTF-8"] {
            let (_, printed) = grade(&files[..1], lang, &[]);
            let failure: String = printed
                .lines()
                .skip_while(|l| !l.contains("step 6"))
                .take_while(|l| !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                failure.lines().all(|l| l.chars().count() <= 80),
                "{failure}"
            );
            shown.push_str(&format!("--- {edition}, {lang}\n{failure}\n"));
        }
    }
    insta::assert_snapshot!(shown);
}

/// Every wheat and every variant, in both editions, agrees with the contract
/// on 10,000 random sequences (1,250 a step).
#[test]
#[ignore = "slow: .ci/run step 2"]
fn every_correct_implementation_agrees_on_ten_thousand_random_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (wheats, reference, edition) in [
        (
            fencelab::lab::wheat::Wheats::builtin(),
            fencelab::lab::reference::REFERENCE.to_string(),
            "rs",
        ),
        (
            fencelab::lab::wheat::Wheats::builtin_python(),
            std::fs::read_to_string(root().join("python/lease.py")).unwrap(),
            "py",
        ),
    ] {
        // Full wheats and single-freedom variants alike, as fencelab reads them.
        let of_edition: Vec<_> = (wheats.wheats.iter())
            .map(|w| {
                let file = dir.path().join(format!("{}.{edition}", w.id));
                std::fs::write(&file, w.code(&reference).unwrap()).unwrap();
                file
            })
            .collect();
        files.push(of_edition);
    }
    for of_edition in files {
        let (report, printed) = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .arg("grade")
            .args(&of_edition)
            .args(["--timeout", "600", "--json"])
            .arg(dir.path().join("grade.json"))
            .env("FENCELAB_RANDOM_SEQUENCES", "1250")
            .env("NO_COLOR", "1")
            .current_dir(root())
            .output()
            .map(|out| {
                let text = std::fs::read_to_string(dir.path().join("grade.json")).unwrap();
                let report: Value = serde_json::from_str(&text).unwrap();
                (report, String::from_utf8_lossy(&out.stdout).into_owned())
            })
            .unwrap();
        let submissions = report["submissions"].as_array().unwrap();
        assert!(submissions.len() >= 6, "{printed}");
        for s in submissions {
            assert_eq!(s["score"], 100.0, "{}:\n{printed}", s["name"]);
        }
    }
}
