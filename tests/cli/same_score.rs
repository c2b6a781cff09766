//! Same code, same score: a submission gets the same score, and every test
//! the same verdict, graded alone, in a batch, again, and beside busy
//! processes (`engine::hangs`). A function that hangs fails only the tests
//! that call it.
//!
//! `cargo test` runs the quick form (one sleeping and one spinning `renew`,
//! alone); `.ci/run`'s second step the full forms. `SAME_SCORE_N=100` makes
//! the class of the loaded batch that large, by hand.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::Value;

use crate::common::{changed, changed_reference, fixture, root};

/// Processes that keep every core busy, `per_core` each, until dropped.
struct Busy(Vec<Child>);

impl Busy {
    fn start(per_core: usize) -> Busy {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Busy(
            (0..cores * per_core)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `fencelab grade FILES ARGS --json`: the report, and the wall time.
fn grade(files: &[PathBuf], args: &[&str]) -> (Value, f64) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grade.json");
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("grade")
        .args(files)
        .args(args)
        .arg("--json")
        .arg(&json)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
        panic!(
            "no report:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (serde_json::from_str(&text).unwrap(), secs)
}

/// A submission's score and every test's verdict, as a learner is told
/// them: all but how long each took.
fn verdicts(submission: &Value) -> (f64, Vec<String>) {
    let tests = submission["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut t = t.clone();
            let t = t.as_object_mut().unwrap();
            t.remove("secs");
            t.remove("stopped_after_secs");
            serde_json::to_string(t).unwrap()
        })
        .collect();
    (submission["score"].as_f64().unwrap(), tests)
}

/// The submissions of `report` by file name.
fn by_name(report: &Value) -> Vec<(String, &Value)> {
    report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let file = s["file"].as_str().unwrap();
            let name = Path::new(file).file_name().unwrap().to_string_lossy();
            (name.into_owned(), s)
        })
        .collect()
}

/// Writes `source` to `dir/name`.
fn write(dir: &Path, name: &str, source: &str) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, source).unwrap();
    file
}

/// The four hanging `renew`s: sleeping and spinning, in Rust and Python.
fn hanging_renews(dir: &Path) -> Vec<PathBuf> {
    let python = std::fs::read_to_string(root().join("python/lease.py")).unwrap();
    let mut files = Vec::new();
    for kind in ["renew_sleeps", "renew_spins"] {
        let (_, rust) = changed_reference(&fixture(&format!("{kind}.toml")));
        files.push(write(dir, &format!("{kind}.rs"), &rust));
        let change = root().join(format!("tests/fixtures/python/{kind}.toml"));
        let (_, py) = changed(&change, &python);
        files.push(write(dir, &format!("{kind}.py"), &py));
    }
    files
}

/// A submission whose `renew` hangs loses step 5, every test of it for
/// time (confirmed, or past the budget), and nothing else: 87.50.
fn loses_step_5_only(name: &str, submission: &Value) {
    assert_eq!(submission["score"], 87.5, "{name}: {submission}");
    for t in submission["tests"].as_array().unwrap() {
        let outcome = t["outcome"].as_str().unwrap();
        match t["step"].as_u64() {
            Some(5) => assert!(
                outcome == "timed_out" && t["confirmed"] == true || outcome == "over_budget",
                "{name}: {t}"
            ),
            _ => assert_eq!(outcome, "passed", "{name}: {t}"),
        }
    }
}

#[test]
fn a_function_that_hangs_fails_only_the_tests_that_call_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = hanging_renews(dir.path());
    // A sleeping Rust renew and a spinning Python one: each rule, each
    // edition. (All four, thrice, loaded: the full form below.)
    let quick = [files[0].clone(), files[3].clone()];
    for file in &quick {
        let (report, secs) = grade(std::slice::from_ref(file), &[]);
        let (name, submission) = by_name(&report).remove(0);
        loses_step_5_only(&name, submission);
        let stopped_by = if name.contains("sleeps") {
            "waits"
        } else {
            "spins"
        };
        let confirmed = submission["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["confirmed"] == true && t["stopped_by"] == stopped_by)
            .count();
        // 2 s of waiting or 0.3 s of processor time a confirmation, from a
        // budget of 15 s: 8 confirmed of the sleeper's 17 (step 5's random
        // calls among them), all the spinner's.
        let expected = if stopped_by == "waits" { 8 } else { 17 };
        assert_eq!(confirmed, expected, "{name}: {submission}");
        eprintln!("{name}: graded alone in {secs:.1} s");
    }
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn hanging_functions_score_the_same_alone_thrice_loaded_and_in_the_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let files = hanging_renews(dir.path());
    let alone: Vec<(String, (f64, Vec<String>))> = files
        .iter()
        .map(|file| {
            let runs: Vec<(f64, Vec<String>)> = (0..3)
                .map(|_| {
                    let (report, _) = grade(std::slice::from_ref(file), &[]);
                    let (name, submission) = by_name(&report).remove(0);
                    loses_step_5_only(&name, submission);
                    verdicts(submission)
                })
                .collect();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            assert!(runs.iter().all(|r| *r == runs[0]), "{name}: {runs:#?}");
            (name, runs[0].clone())
        })
        .collect();
    // Together, with a correct one, beside four busy processes per core:
    // an edition a batch.
    let python = std::fs::read_to_string(root().join("python/lease.py")).unwrap();
    for (extension, reference) in [("rs", fencelab::lab::reference::REFERENCE), ("py", &python)] {
        let correct = write(dir.path(), &format!("correct.{extension}"), reference);
        let mut batch: Vec<PathBuf> = files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == extension))
            .cloned()
            .collect();
        batch.push(correct);
        let (report, secs) = {
            let _busy = Busy::start(4);
            grade(&batch, &[])
        };
        eprintln!("the loaded batch of three (.{extension}): {secs:.1} s");
        for (name, submission) in by_name(&report) {
            match alone.iter().find(|(n, _)| *n == name) {
                Some((_, verdicts_alone)) => {
                    assert_eq!(&verdicts(submission), verdicts_alone, "{name}")
                }
                None => assert_eq!(submission["score"], 100.0, "{name}"),
            }
        }
    }
    // The Rust ones through Gradescope's and PrairieLearn's bundles.
    let tmp = tempfile::tempdir().unwrap();
    let gradescope = tmp.path().join("autograder");
    crate::shards::bundle("gradescope", &gradescope.join("source"));
    let env = [("FENCELAB_AUTOGRADER_ROOT", gradescope.as_path())];
    let (exit, said) = crate::shards::run_script(&gradescope.join("source/setup.sh"), &env);
    assert_eq!(exit, 0, "{said}");
    let prairielearn = tmp.path().join("fencelab");
    crate::shards::bundle("prairielearn", &prairielearn);
    let (exit, said) = crate::shards::run_script(&prairielearn.join("prebuild.sh"), &[]);
    assert_eq!(exit, 0, "{said}");
    let grade_root = tmp.path().join("grade");
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let source = std::fs::read_to_string(file).unwrap();
        let submission = gradescope.join("submission");
        let _ = std::fs::remove_dir_all(&submission);
        std::fs::create_dir_all(&submission).unwrap();
        std::fs::write(submission.join("lib.rs"), &source).unwrap();
        let (exit, said) =
            crate::shards::run_script(&gradescope.join("source/run_autograder"), &env);
        assert_eq!(exit, 0, "{said}");
        let results = crate::shards::read(&gradescope.join("results/results.json"));
        assert_eq!(results["score"], 87.5, "{}: {results}", file.display());
        let student = grade_root.join("student");
        let _ = std::fs::remove_dir_all(&student);
        std::fs::create_dir_all(&student).unwrap();
        std::fs::write(student.join("lib.rs"), &source).unwrap();
        let env = [("FENCELAB_GRADE_ROOT", grade_root.as_path())];
        let (exit, said) = crate::shards::run_script(&prairielearn.join("run.sh"), &env);
        assert_eq!(exit, 0, "{said}");
        let results = crate::shards::read(&grade_root.join("results/results.json"));
        assert_eq!(results["score"], 0.875, "{}: {results}", file.display());
    }
}

/// Sixteen submissions of every kind: correct ones, one broken in each
/// step, two that hang (one sleeps, one spins) and one that does not
/// compile; `n` of them, going round the kinds.
fn class(dir: &Path, n: usize) -> Vec<PathBuf> {
    let mut sources = vec![
        (
            "reference".to_string(),
            fencelab::lab::reference::REFERENCE.to_string(),
        ),
        (
            "alternative".to_string(),
            std::fs::read_to_string(fixture("alternative.rs")).unwrap(),
        ),
    ];
    for wheat in ["exclusive", "lazy", "upsert"] {
        let file = root().join(format!("wheats/{wheat}.rs"));
        sources.push((wheat.to_string(), std::fs::read_to_string(file).unwrap()));
    }
    let changes = [
        "mutants/init_db-defaults-only-in-enqueue.toml",
        "mutants/enqueue-always-true.toml",
        "mutants/state-default-for-missing-row.toml",
        "mutants/check_now-misses-infinity.toml",
        "mutants/renew-accepts-a-later-fence.toml",
        "mutants/complete-checks-only-the-clock.toml",
        "mutants/release-allows-done.toml",
        "mutants/claim_many-answers-reversed.toml",
    ];
    for change in changes {
        sources.push(changed_reference(&root().join(change)));
    }
    for change in [
        "renew_sleeps.toml",
        "infinite_loop.toml",
        "does_not_compile.toml",
    ] {
        sources.push(changed_reference(&fixture(change)));
    }
    assert_eq!(sources.len(), 16);
    (0..n)
        .map(|i| {
            let (kind, source) = &sources[i % sources.len()];
            write(
                dir,
                &format!("s{i:03}-{kind}.rs"),
                &format!("{source}\n// {i}\n"),
            )
        })
        .collect()
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn sixteen_submissions_score_alike_alone_and_in_a_loaded_batch() {
    let n = std::env::var("SAME_SCORE_N").map_or(16, |n| n.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let files = class(dir.path(), n);
    // Alone, one kind at a time (a copy with another comment is graded
    // the same: the same code).
    let mut alone = std::collections::BTreeMap::new();
    let mut alone_secs = 0.0;
    for file in files.iter().take(16) {
        let (report, secs) = grade(std::slice::from_ref(file), &[]);
        alone_secs += secs;
        let (name, submission) = by_name(&report).remove(0);
        let kind = name.split_once('-').unwrap().1.to_string();
        alone.insert(kind, verdicts(submission));
    }
    let (report, secs) = {
        let _busy = Busy::start(4);
        grade(&files, &[])
    };
    eprintln!(
        "{n} submissions: alone {alone_secs:.1} s in all (16 kinds), together beside \
         four busy processes per core {secs:.1} s"
    );
    let mut differ = Vec::new();
    for (name, submission) in by_name(&report) {
        let kind = name.split_once('-').unwrap().1;
        if verdicts(submission) != alone[kind] {
            differ.push(format!("{name}: {:?} alone, {submission}", alone[kind].0));
        }
    }
    assert!(differ.is_empty(), "{differ:#?}");
    // The hanging ones spent no more than their budget's worth of
    // confirmations (15 s, in what their rules allow).
    for (name, submission) in by_name(&report) {
        let spent: f64 = submission["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["confirmed"] == true)
            .map(|t| t["rule_secs"].as_f64().unwrap_or(10.0))
            .sum();
        assert!(spent < 15.0 + 10.0, "{name}: {spent} s");
    }
}
