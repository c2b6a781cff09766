//! Grading a class: many distinct submissions in one `grade` call, and
//! several `grade` runs at once on one target directory. Each submission must
//! get exactly the score it gets when graded alone, however many there are:
//! nothing a live run built may be removed from under it (the scratch
//! collector keeps only a few unused servers; `FENCELAB_GC_KEEP` makes that
//! one here, so that a small batch is already larger than what it keeps).
//!
//! They run in `.ci/run`'s second step, last: a collector that keeps one
//! server and one implementation removes every other test's, so run beside
//! `cargo test` they would leave its scratch cache cold (every server and
//! mutant built again, in the run and the next). In `cargo test`, the
//! collector's own tests hold the same guarantee on a workspace of their own
//! (`engine/scratch/collector.rs`: nothing a live run pinned is collected,
//! however old; a pin held by another process is live; what a kept server
//! hosts is kept with it).
//!
//! The class-sized versions (200 in one call; two runs of 50 at once, in
//! `class_sized`) take minutes in a release build and are a measurement run
//! by hand, in neither step of `.ci/run`:
//! `cargo test --release --test cli batch::class_sized -- --ignored`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::common::{changed_reference, fixture, root};

/// The kinds of submission a class hands in: correct ones written two ways,
/// broken ones, and one that does not compile.
fn kinds() -> Vec<(String, String)> {
    let mut kinds = vec![
        (
            "reference".to_string(),
            fencelab::lab::reference::REFERENCE.to_string(),
        ),
        (
            "alternative".to_string(),
            std::fs::read_to_string(fixture("alternative.rs")).unwrap(),
        ),
    ];
    for change in [
        fixture("release_resets_fence.toml"),
        root().join("mutants/claim-expiry-inclusive.toml"),
        root().join("mutants/renew-revives-at-expiry.toml"),
        fixture("does_not_compile.toml"),
    ] {
        kinds.push(changed_reference(&change));
    }
    kinds
}

/// `n` distinct submissions in `dir`, going round `kinds`: each is its kind's
/// source with a comment of its own, so that each is built as a program of
/// its own. Returns (file, kind).
fn class(dir: &Path, kinds: &[(String, String)], n: usize, tag: &str) -> Vec<(PathBuf, String)> {
    (0..n)
        .map(|i| {
            let (kind, source) = &kinds[i % kinds.len()];
            let file = dir.join(format!("{tag}-{i:03}-{kind}.rs"));
            std::fs::write(&file, format!("{source}\n// submission {tag} {i}\n")).unwrap();
            (file, kind.clone())
        })
        .collect()
}

/// `fencelab grade FILES --json DIR/NAME.json`, started (not waited for).
fn start_grade(files: &[PathBuf], json: &Path, keep: Option<usize>) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencelab"));
    command
        .arg("grade")
        .args(files)
        .arg("--json")
        .arg(json)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(keep) = keep {
        command.env(fencelab::engine::scratch::KEEP_ENV, keep.to_string());
    }
    command.spawn().unwrap()
}

/// Waits for a grade run; returns its exit code and its report's submissions.
fn finish(child: Child, json: &Path) -> (i32, Vec<Value>) {
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(json).unwrap_or_else(|e| panic!("no report ({e}): {stderr}")),
    )
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        report["submissions"].as_array().unwrap().clone(),
    )
}

/// Each kind's score when its source is graded on its own (one copy of each
/// kind, in one run with the collector's default keep, far above their
/// number): what a batch must give each of its submissions. Graded once
/// for every test here.
fn alone(kinds: &[(String, String)]) -> BTreeMap<String, f64> {
    static ALONE: std::sync::OnceLock<BTreeMap<String, f64>> = std::sync::OnceLock::new();
    let all = ALONE
        .get_or_init(|| crate::common::stored::stored("batch-alone", &[&fixture("")], grade_alone));
    kinds
        .iter()
        .map(|(kind, _)| (kind.clone(), all[kind]))
        .collect()
}

/// What `alone` reads: one copy of each kind, graded in one run.
fn grade_alone() -> BTreeMap<String, f64> {
    {
        let dir = tempfile::tempdir().unwrap();
        let every = self::kinds();
        let files: Vec<PathBuf> = every
            .iter()
            .map(|(kind, source)| {
                let file = dir.path().join(format!("alone-{kind}.rs"));
                std::fs::write(&file, source).unwrap();
                file
            })
            .collect();
        let json = dir.path().join("alone.json");
        let (_, subs) = finish(start_grade(&files, &json, None), &json);
        every
            .iter()
            .map(|(kind, _)| {
                let name = format!("alone-{kind}.rs");
                let sub = subs
                    .iter()
                    .find(|s| s["name"].as_str().unwrap().ends_with(&name))
                    .unwrap_or_else(|| panic!("no row for {name}"));
                (kind.clone(), sub["score"].as_f64().unwrap())
            })
            .collect()
    }
}

/// Every submission of a report is there, graded, with its kind's score alone.
fn assert_graded_as_alone(
    subs: &[Value],
    class: &[(PathBuf, String)],
    alone: &BTreeMap<String, f64>,
) {
    assert_eq!(subs.len(), class.len(), "one report row per submission");
    for (file, kind) in class {
        let name = file.display().to_string();
        let sub = subs
            .iter()
            .find(|s| s["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no row for {name}"));
        let errors = sub["compile_errors"].as_str().unwrap_or("");
        assert!(
            !errors.contains("did not start"),
            "{name}: its program was lost: {errors}"
        );
        assert_eq!(
            sub["score"].as_f64(),
            Some(alone[kind]),
            "{name} ({kind}) scores as it does alone"
        );
        assert_eq!(
            sub["compile_errors"].is_null(),
            kind != "does_not_compile",
            "{name}: {errors}"
        );
    }
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn a_batch_larger_than_what_the_collector_keeps_scores_each_submission_as_alone() {
    let dir = tempfile::tempdir().unwrap();
    let kinds: Vec<(String, String)> = kinds()
        .into_iter()
        .filter(|(k, _)| {
            ["reference", "release_resets_fence", "does_not_compile"].contains(&k.as_str())
        })
        .collect();
    let alone = alone(&kinds);
    assert_eq!(alone["reference"], 100.0);
    assert!(alone["release_resets_fence"] < 100.0);
    let class = class(dir.path(), &kinds, 4, "a");
    let files: Vec<PathBuf> = class.iter().map(|(f, _)| f.clone()).collect();
    let json = dir.path().join("batch.json");
    // The collector keeps one unused server: the batch builds three (two
    // references and a broken one, each with a comment of its own).
    let (exit, subs) = finish(start_grade(&files, &json, Some(1)), &json);
    assert_eq!(exit, 3, "some submissions do not compile");
    assert_graded_as_alone(&subs, &class, &alone);
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn two_batches_at_once_on_one_target_directory_both_score_as_alone() {
    let dir = tempfile::tempdir().unwrap();
    let kinds: Vec<(String, String)> = kinds()
        .into_iter()
        .filter(|(k, _)| ["alternative", "claim-expiry-inclusive"].contains(&k.as_str()))
        .collect();
    let alone = alone(&kinds);
    // Two servers each, one kept unused: each run's collector would remove
    // what the other has built and not yet run, but for its pins.
    let classes = [
        class(dir.path(), &kinds, 2, "x"),
        class(dir.path(), &kinds, 2, "y"),
    ];
    let runs: Vec<(Child, PathBuf)> = classes
        .iter()
        .enumerate()
        .map(|(i, class)| {
            let files: Vec<PathBuf> = class.iter().map(|(f, _)| f.clone()).collect();
            let json = dir.path().join(format!("run-{i}.json"));
            (start_grade(&files, &json, Some(1)), json)
        })
        .collect();
    for ((child, json), class) in runs.into_iter().zip(&classes) {
        let (exit, subs) = finish(child, &json);
        assert_eq!(exit, 0);
        assert_graded_as_alone(&subs, class, &alone);
    }
}

/// What a whole class hands in, graded as in a release: run by hand (see the
/// module's header); `.ci/run` skips it.
mod class_sized {
    use std::path::PathBuf;
    use std::process::Child;

    use super::{alone, assert_graded_as_alone, class, finish, kinds, start_grade};

    #[test]
    #[ignore = "class-sized (minutes): cargo test --release --test cli batch::class_sized -- --ignored"]
    fn two_hundred_distinct_submissions_in_one_call_each_score_as_alone() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = kinds();
        let alone = alone(&kinds);
        let class = class(dir.path(), &kinds, 200, "c");
        let files: Vec<PathBuf> = class.iter().map(|(f, _)| f.clone()).collect();
        let json = dir.path().join("class.json");
        let start = std::time::Instant::now();
        let (exit, subs) = finish(start_grade(&files, &json, None), &json);
        eprintln!(
            "200 submissions graded in {:.0} s",
            start.elapsed().as_secs_f64()
        );
        assert_eq!(exit, 3, "some submissions do not compile");
        assert_graded_as_alone(&subs, &class, &alone);
    }

    #[test]
    #[ignore = "class-sized (minutes): cargo test --release --test cli batch::class_sized -- --ignored"]
    fn two_runs_of_fifty_at_once_on_one_target_directory_each_score_as_alone() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = kinds();
        let alone = alone(&kinds);
        let classes = [
            class(dir.path(), &kinds, 50, "p"),
            class(dir.path(), &kinds, 50, "q"),
        ];
        let start = std::time::Instant::now();
        let runs: Vec<(Child, PathBuf)> = classes
            .iter()
            .enumerate()
            .map(|(i, class)| {
                let files: Vec<PathBuf> = class.iter().map(|(f, _)| f.clone()).collect();
                let json = dir.path().join(format!("run-{i}.json"));
                (start_grade(&files, &json, None), json)
            })
            .collect();
        for ((child, json), class) in runs.into_iter().zip(&classes) {
            let (exit, subs) = finish(child, &json);
            assert_eq!(exit, 3, "some submissions do not compile");
            assert_graded_as_alone(&subs, class, &alone);
        }
        eprintln!(
            "2 x 50 submissions graded in {:.0} s",
            start.elapsed().as_secs_f64()
        );
    }
}
