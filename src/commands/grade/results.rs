//! `grade --results DIR`: grading that can be retried, duplicated or resumed
//! without grading anything twice. Think of a Kubernetes pod retried with its
//! index, PrairieLearn's at-least-once delivery, or a CI job rerun.
//!
//! The directory holds one result per submission, `submissions/<key>.json`.
//! The key hashes what decides the score and nothing else (`key`). So the same
//! file graded under two names, or with another `--min-score`, reuses it. A
//! result is published once, and the first one stays (`Results::publish`).
//! Every report is built from the stored bytes read back, so a retried or
//! duplicated shard writes the same report, byte for byte.
//!
//! Beside the results, each run leaves its report in `shards/`. `grade --merge
//! DIR` reads those as it reads the reports of `--json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::commands::grade::{
    GradeReport, Options, Submission, SubmissionReport, Unusable, exit_code_of,
};
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::lab::lang::Lang;
use crate::lab::suite;
use crate::output::printer::{Printer, Verb};
use crate::output::progress::Progress as _;

/// Where the compiler's messages named the submission's file: its path is
/// the run's, so it is put back on reading.
const FILE_MARK: &str = "\u{1}file\u{1}";

/// One submission's stored result.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    schema: u32,
    key: String,
    fencelab_version: String,
    suite: String,
    /// The report, without name, path or gate.
    result: SubmissionReport,
}

/// A results directory.
pub(crate) struct Results {
    dir: PathBuf,
}

fn say(lang: Lang, en: String, ja: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ja => ja,
    }
}

impl Results {
    /// Opens (creating it if needed) the results directory `dir`.
    pub(crate) fn open(dir: &Path, lang: Lang) -> Result<Results, Error> {
        for sub in ["submissions", "shards"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).map_err(|e| {
                Error::io("create the results directory", &path, e).with_next(say(
                    lang,
                    "give --results a directory this user may write (shared by every shard)"
                        .to_string(),
                    "--results には書き込める（全シャードで共有する）ディレクトリを指定してください"
                        .to_string(),
                ))
            })?;
        }
        Ok(Results {
            dir: dir.to_path_buf(),
        })
    }

    fn result_path(&self, key: &str) -> PathBuf {
        self.dir.join("submissions").join(format!("{key}.json"))
    }

    /// The stored result of `key`, if there is a readable one.
    fn load(&self, key: &str) -> Option<Stored> {
        let text = std::fs::read_to_string(self.result_path(key)).ok()?;
        let stored: Stored = serde_json::from_str(&text).ok()?;
        (stored.schema == 1 && stored.key == key).then_some(stored)
    }

    /// Publishes `stored` unless a result is there already; returns what is
    /// there then (this one or the first writer's), as read back. It is
    /// written aside, then linked into place, so a runner that finds
    /// another's result there reports that one.
    fn publish(&self, stored: &Stored) -> Result<Stored, Error> {
        let path = self.result_path(&stored.key);
        if let Some(there) = self.load(&stored.key) {
            return Ok(there);
        }
        let text = serde_json::to_string_pretty(stored).expect("a result serializes") + "\n";
        let aside = self.dir.join("submissions").join(format!(
            ".{}.{}.tmp",
            stored.key,
            std::process::id()
        ));
        std::fs::write(&aside, text).map_err(|e| Error::io("write a result to", &aside, e))?;
        // A link never replaces: the first result published stays. One that
        // is there but unreadable (cut short by a full disk) is replaced.
        if std::fs::hard_link(&aside, &path).is_err() && self.load(&stored.key).is_none() {
            std::fs::rename(&aside, &path).map_err(|e| Error::io("write a result to", &path, e))?;
        }
        let _ = std::fs::remove_file(&aside);
        self.load(&stored.key).ok_or_else(|| {
            Error::environment(format!(
                "{}: the result written cannot be read back",
                path.display()
            ))
            .with_next("check the results directory's disk (full? shared filesystem?)")
        })
    }

    /// Writes this run's report into `shards/`, named by its shard and a hash
    /// of how it graded. It replaces the same shard's report of the same
    /// grading (a retry writes the same bytes).
    fn write_report(&self, report: &GradeReport) -> Result<PathBuf, Error> {
        let label = match report.shard {
            Some((k, n)) => format!("{k}-of-{n}"),
            None => "all".to_string(),
        };
        let how = crate::engine::scratch::hash_of([
            report.fencelab_version.as_str(),
            report.suite.as_str(),
            &report.min_score.to_string(),
            &report.test_limit_secs.to_string(),
            &report.build_limit_secs.to_string(),
            &budget_text(report.budget_secs),
        ]);
        let path = self
            .dir
            .join("shards")
            .join(format!("{label}-{}.json", &how[..12]));
        let aside = path.with_extension(format!("{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(report).expect("the report serializes") + "\n";
        std::fs::write(&aside, text)
            .and_then(|()| std::fs::rename(&aside, &path))
            .map_err(|e| Error::io("write the shard's report to", &path, e))?;
        Ok(path)
    }
}

/// The limits a report records, as `grade::run` writes them.
fn test_limit_secs(options: &Options) -> f64 {
    options.policy.limit_after(None).as_secs_f64()
}

fn build_limit_secs(options: &Options) -> f64 {
    options.policy.build_limit.unwrap_or_default().as_secs_f64()
}

fn budget_secs(options: &Options) -> Option<f64> {
    options.policy.budget.map(|b| b.as_secs_f64())
}

/// The budget as keys and report names take it ("none" without one).
fn budget_text(budget: Option<f64>) -> String {
    budget.map_or("none".to_string(), |b| b.to_string())
}

/// The key of a submission's result under `options`: a SHA-256 of the
/// submission's file, the suite's digest, fencelab's version and the limits
/// (`--timeout`, `--build-timeout`, `--budget`). Its name, its path and the
/// gate are not in it: they are the run's, put back on reading (`as_report`).
pub(crate) fn key(source: &str, options: &Options) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in [
        "fencelab grade result 1",
        env!("CARGO_PKG_VERSION"),
        &suite::digest(),
        &test_limit_secs(options).to_string(),
        &build_limit_secs(options).to_string(),
        &budget_text(budget_secs(options)),
    ] {
        hasher.update(part.len().to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.update(source.len().to_le_bytes());
    hasher.update(source.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A stored result as this run's report of `submission`: its name and path
/// put back, its steps weighed and its gate decided by this run's options.
fn as_report(stored: Stored, submission: &Submission, options: &Options) -> SubmissionReport {
    let mut report = stored.result;
    let file = super::shown(&submission.file);
    report.compile_errors = report
        .compile_errors
        .map(|errors| errors.replace(FILE_MARK, &file));
    report.name = submission.name.clone();
    report.file = file;
    for step in &mut report.steps {
        step.weight = options.weights.of(step.step);
    }
    // The exact score, as `submission_report` computes it: the stored one is
    // rounded to 1/100, and weighed as the run that stored it said.
    let exact = super::points::weighted(&report.steps) * 100.0;
    if report.not_graded().is_none() {
        report.score = (exact * 100.0).round() / 100.0;
    }
    report.passed_gate = report.compile_errors.is_none() && exact >= options.min_score;
    report
}

/// A fresh report as it is stored: without what is the run's.
fn to_stored(mut report: SubmissionReport, key: String) -> Stored {
    report.compile_errors = report
        .compile_errors
        .map(|errors| errors.replace(&report.file, FILE_MARK));
    report.name = String::new();
    report.file = String::new();
    report.passed_gate = false;
    Stored {
        schema: 1,
        key,
        fencelab_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: suite::digest(),
        result: report,
    }
}

/// Grades `inputs` as `grade::run` does, taking every result already in
/// `dir` and storing every new one; then leaves the report in `dir/shards/`.
pub(crate) fn run(
    dir: &Path,
    options: &Options,
    inputs: &[Result<Submission, Unusable>],
    scratch: &Scratch,
    printer: &mut Printer,
) -> Result<GradeReport, Error> {
    let results = Results::open(dir, printer.lang)?;
    let keys: Vec<Option<String>> = inputs
        .iter()
        .map(|i| i.as_ref().ok().map(|s| key(&s.source, options)))
        .collect();
    let mut reports: Vec<Option<SubmissionReport>> = vec![None; inputs.len()];
    let mut to_grade: Vec<usize> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        match (input, &keys[i]) {
            (Ok(submission), Some(key)) => match results.load(key) {
                Some(stored) => {
                    reports[i] = Some(as_report(stored, submission, options));
                }
                None => to_grade.push(i),
            },
            _ => to_grade.push(i),
        }
    }
    let before = reports.iter().filter(|r| r.is_some()).count();
    printer.status(
        Verb::Grading,
        &render_taken(
            printer.lang,
            &dir.display().to_string(),
            before,
            inputs.len(),
        ),
    );
    let mut live = super::Live::new(printer, inputs.len());
    for report in reports.iter().flatten() {
        live.own(report);
    }
    if !to_grade.is_empty() {
        let subset: Vec<Result<Submission, Unusable>> =
            to_grade.iter().map(|i| inputs[*i].clone()).collect();
        let graded = super::run(options, &subset, scratch, &mut live)?;
        for (i, report) in to_grade.iter().zip(graded.submissions) {
            reports[*i] = Some(match (&inputs[*i], &keys[*i]) {
                (Ok(submission), Some(key)) => {
                    let stored = results.publish(&to_stored(report, key.clone()))?;
                    as_report(stored, submission, options)
                }
                // Unusable inputs are not stored: saying why costs nothing.
                _ => report,
            });
        }
    }
    let submissions: Vec<SubmissionReport> = reports
        .into_iter()
        .map(|r| r.expect("every input has a report"))
        .collect();
    let report = GradeReport {
        schema: 1,
        fencelab_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: suite::digest(),
        min_score: options.min_score,
        test_limit_secs: test_limit_secs(options),
        build_limit_secs: build_limit_secs(options),
        budget_secs: budget_secs(options),
        shard: options.shard,
        weights: options.weights.by_slug(),
        correct_implementations: Vec::new(),
        freedoms: Default::default(),
        exit_code: exit_code_of(&submissions),
        submissions,
    };
    results.write_report(&report)?;
    Ok(report)
}

/// The line a run with `--results` starts with: how many of its submissions
/// were graded before and how many it grades.
pub(crate) fn render_taken(lang: Lang, dir: &str, before: usize, total: usize) -> String {
    let now = total - before;
    match lang {
        Lang::En if before == 0 => format!("{total} to grade; results go to {dir}"),
        Lang::En if now == 0 => {
            format!("nothing: all {total} already graded in {dir}")
        }
        Lang::En => format!("{now} of {total}; {before} already graded in {dir}"),
        Lang::Ja if before == 0 => format!("{total} 件を採点します。結果は {dir} に書きます"),
        Lang::Ja if now == 0 => format!("なし: {total} 件とも {dir} で採点済みです"),
        Lang::Ja => format!("{total} 件のうち {now} 件（{before} 件は {dir} で採点済み）"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_line_says_what_was_graded_before_in_both_languages() {
        let lines: Vec<String> = [Lang::En, Lang::Ja]
            .into_iter()
            .flat_map(|lang| {
                [
                    render_taken(lang, "results", 0, 26),
                    render_taken(lang, "results", 20, 26),
                    render_taken(lang, "results", 26, 26),
                ]
            })
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    fn options() -> Options {
        Options {
            min_score: 60.0,
            policy: crate::engine::policy::Policy::of(crate::engine::policy::Trust::Submissions),
            jobs: 1,
            shard: None,
            weights: Default::default(),
        }
    }

    #[test]
    fn the_key_changes_with_the_file_and_the_limits_and_not_the_gate() {
        let base = key("fn a() {}", &options());
        assert_eq!(base.len(), 64);
        assert_eq!(base, key("fn a() {}", &options()));
        assert_ne!(base, key("fn a() { }", &options()));
        let mut other = options();
        other.policy = other
            .policy
            .with_limits(Some(std::time::Duration::from_secs(5)), None);
        assert_ne!(base, key("fn a() {}", &other));
        let mut other = options();
        other.policy = other
            .policy
            .with_limits(None, Some(std::time::Duration::from_secs(60)));
        assert_ne!(base, key("fn a() {}", &other));
        let mut other = options();
        other.policy = other
            .policy
            .with_budget(Some(std::time::Duration::from_secs(30)));
        assert_ne!(base, key("fn a() {}", &other));
        let mut other = options();
        other.min_score = 100.0;
        other.shard = Some((1, 2));
        other.jobs = 8;
        assert_eq!(base, key("fn a() {}", &other));
    }

    #[test]
    fn a_stored_result_takes_the_runs_name_path_and_gate() {
        let mut report =
            crate::commands::grade::points::tests::submission(&[2; 8], &[2, 2, 2, 1, 2, 2, 2, 2]);
        report.file = "submissions/ada.rs".into();
        report.compile_errors = None;
        let stored = to_stored(report.clone(), "k".into());
        assert_eq!(stored.result.name, "");
        let submission = Submission {
            name: "ben.rs".into(),
            file: PathBuf::from("ben.rs"),
            source: String::new(),
        };
        let gate = |min_score| Options {
            min_score,
            ..options()
        };
        // 15 of 16 tests, one step at half: 93.75.
        let back = as_report(stored.clone(), &submission, &gate(93.75));
        assert_eq!(
            (back.name.as_str(), back.file.as_str()),
            ("ben.rs", "ben.rs")
        );
        assert!(back.passed_gate);
        assert!(!as_report(stored.clone(), &submission, &gate(93.76)).passed_gate);
        // Weighed as this run says: step 4, at half, now weighs 9 of 16.
        let mut weights = crate::lab::course::Weights::default();
        weights.0[3] = 9.0;
        let weighed = as_report(
            stored,
            &submission,
            &Options {
                weights,
                ..gate(0.0)
            },
        );
        assert_eq!(weighed.score, 71.88, "(7 + 9 / 2) / 16");
        assert_eq!(weighed.steps[3].weight, 9.0);
        // The compiler's messages name the file of the run that reads them.
        report.compile_errors = Some("error\n --> submissions/ada.rs:3:5".into());
        let back = as_report(to_stored(report, "k".into()), &submission, &gate(0.0));
        assert_eq!(
            back.compile_errors.as_deref(),
            Some("error\n --> ben.rs:3:5")
        );
        assert!(!back.passed_gate);
    }

    #[test]
    fn a_result_is_published_once_and_the_first_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let results = Results::open(dir.path(), Lang::En).unwrap();
        let report = crate::commands::grade::points::tests::submission(&[2; 8], &[2; 8]);
        let first = to_stored(report.clone(), "k".into());
        let mut second = first.clone();
        second.result.tests.clear();
        let published = results.publish(&first).unwrap();
        let bytes = std::fs::read(results.result_path("k")).unwrap();
        let again = results.publish(&second).unwrap();
        assert_eq!(std::fs::read(results.result_path("k")).unwrap(), bytes);
        assert_eq!(
            serde_json::to_value(&again.result).unwrap(),
            serde_json::to_value(&published.result).unwrap()
        );
        // Nothing is left aside.
        let names: Vec<String> = std::fs::read_dir(dir.path().join("submissions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["k.json"]);
    }

    #[test]
    fn runs_under_two_budgets_leave_two_reports_not_one_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let results = Results::open(dir.path(), Lang::En).unwrap();
        let mut report = GradeReport::of_test(Vec::new(), 60.0);
        report.shard = Some((1, 2));
        let first = results.write_report(&report).unwrap();
        report.budget_secs = Some(30.0);
        let second = results.write_report(&report).unwrap();
        assert_ne!(first, second);
        report.budget_secs = None;
        let third = results.write_report(&report).unwrap();
        assert!(third != first && third != second);
        let name = first.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("1-of-2-"), "{name}");
    }
}
