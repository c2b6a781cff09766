//! `grade --merge shard-*.json`: the JSON reports of `--shard K/N` runs
//! (a CI's parallel runners) combined into one report, from which every
//! format is written as if one runner had graded them all.
//!
//! A path may also be a results directory (`grade --results DIR`), whose
//! runs' reports are then merged.
//!
//! Shards are merged only when they were graded alike: the same fencelab
//! version, the same suite (a digest of its sources), the same options
//! (minimum score, test and build limits, budget) and the same N, with every K there
//! and no submission with two different results. A shard or submission given
//! twice with the same results (a retried or duplicated runner) counts once.
//! Anything else is refused with the file and what differs, since a
//! gradebook made of unlike shards would look right and be wrong.

use std::path::{Path, PathBuf};

use crate::commands::grade::{GradeReport, SubmissionReport, exit_code_of};
use crate::error::Error;

const NEXT: &str = "grade every shard with the same fencelab build and options \
                    (`--shard K/N ... --json shard-K.json`), then merge them again";

/// Reads one shard report.
pub(crate) fn read(path: &Path) -> Result<GradeReport, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("read the shard report", path, e).with_next(NEXT))?;
    let report: GradeReport = serde_json::from_str(&text).map_err(|e| {
        Error::input(format!(
            "{}:{}:{}: not a report of `fencelab grade --json`: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
        .with_next("give the files that `fencelab grade --json FILE` wrote")
    })?;
    if report.schema != 1 {
        return Err(Error::input(format!(
            "{}: a grade report of schema {}, and this fencelab reads schema 1",
            path.display(),
            report.schema
        ))
        .with_next(NEXT));
    }
    if report.suite.is_empty() {
        return Err(Error::input(format!(
            "{}: the report does not say which suite graded it (it was written by an older fencelab)",
            path.display()
        ))
        .with_next(NEXT));
    }
    Ok(report)
}

/// What identifies how a report was graded, as (what, value) to compare.
fn identity(report: &GradeReport) -> Vec<(&'static str, String)> {
    vec![
        ("fencelab version", report.fencelab_version.clone()),
        ("suite", report.suite.clone()),
        ("--min-score", report.min_score.to_string()),
        ("--timeout", report.test_limit_secs.to_string()),
        ("--build-timeout", report.build_limit_secs.to_string()),
        (
            "--budget",
            report
                .budget_secs
                .map_or("none".to_string(), |b| b.to_string()),
        ),
        (
            "step weights",
            (report.weights.iter())
                .map(|(slug, w)| format!("{slug} {w}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "number of shards",
            report
                .shard
                .map_or("none (not a shard)".to_string(), |(_, n)| n.to_string()),
        ),
    ]
}

/// The reports a path gives: itself, or, for a results directory
/// (`grade --results DIR`), every report its runs left in `DIR/shards/`.
fn report_files(path: &Path) -> Result<Vec<PathBuf>, Error> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let shards = path.join("shards");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&shards)
        .map_err(|e| {
            Error::io("read the results directory's reports in", &shards, e).with_next(
                "give --merge the directory that `grade --results DIR` wrote, or the shards' JSON reports",
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::input(format!(
            "{}: no report of a grading in it (none in {})",
            path.display(),
            shards.display()
        ))
        .with_next("grade into it first: fencelab grade ... --shard auto --results DIR"));
    }
    Ok(files)
}

/// A submission's result as compared between two reports: all but timings.
fn verdicts(s: &SubmissionReport) -> serde_json::Value {
    let mut value = serde_json::to_value(s).expect("a report serializes");
    if let Some(tests) = value.get_mut("tests").and_then(|t| t.as_array_mut()) {
        for t in tests {
            if let Some(t) = t.as_object_mut() {
                t.remove("secs");
            }
        }
    }
    value
}

/// What differs between two results of one submission, in a few words.
fn difference(a: &SubmissionReport, b: &SubmissionReport) -> String {
    if a.score != b.score {
        return format!("score {} and {}", a.score, b.score);
    }
    let outcome = |s: &SubmissionReport, name: &str| {
        s.tests
            .iter()
            .find(|t| t.test == name)
            .map(|t| t.outcome.label().to_string())
            .unwrap_or_else(|| "not run".to_string())
    };
    a.tests
        .iter()
        .chain(&b.tests)
        .find(|t| outcome(a, &t.test) != outcome(b, &t.test))
        .map(|t| {
            format!(
                "test {}: {} and {}",
                t.test,
                outcome(a, &t.test),
                outcome(b, &t.test)
            )
        })
        .unwrap_or_else(|| "the same score, with other details".to_string())
}

/// Merges the reports at `paths` (files, or results directories; in any
/// order) into one. A report given twice (a retried or duplicated shard)
/// counts once when it says the same; anything else is refused by name.
pub(crate) fn merge(paths: &[PathBuf]) -> Result<GradeReport, Error> {
    let mut reports: Vec<(PathBuf, GradeReport)> = Vec::new();
    for path in paths {
        for file in report_files(path)? {
            let report = read(&file)?;
            reports.push((file, report));
        }
    }
    let Some((first_path, first)) = reports.first() else {
        return Err(Error::input("--merge needs the shard reports to merge")
            .with_next("give them after the flag: fencelab grade --merge shard-*.json"));
    };
    let expected = identity(first);
    for (path, report) in &reports[1..] {
        for (i, ((what, want), (_, got))) in expected.iter().zip(identity(report)).enumerate() {
            if *want != got {
                // Name every report with its value, so that one look says
                // which runs graded differently.
                let each: Vec<String> = reports
                    .iter()
                    .map(|(p, r)| format!("  {}: {what} {}", p.display(), identity(r)[i].1))
                    .collect();
                return Err(Error::input(format!(
                    "{}: graded with {what} {got}, but {} with {what} {want}: shards graded differently cannot be merged\n{}",
                    path.display(),
                    first_path.display(),
                    each.join("\n")
                ))
                .with_next(NEXT));
            }
        }
    }
    if let Some((_, n)) = first.shard {
        let mut seen: Vec<Option<&PathBuf>> = vec![None; n];
        for (path, report) in &reports {
            let (k, _) = report.shard.expect("the same N, checked above");
            seen[k - 1].get_or_insert(path);
        }
        let missing: Vec<String> = (1..=n)
            .filter(|k| seen[k - 1].is_none())
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            return Err(Error::input(format!(
                "shard(s) {} missing: {} report(s) given of {n}",
                missing.join(", "),
                reports.len()
            ))
            .with_next("wait for every runner of the matrix to finish (or rerun the failed one), then merge all its reports"));
        }
    }
    let mut merged = first.clone();
    merged.shard = None;
    merged.submissions.clear();
    let mut from: Vec<&PathBuf> = Vec::new();
    for (path, report) in &reports {
        for s in &report.submissions {
            match merged.submissions.iter().position(|m| m.name == s.name) {
                Some(i) if verdicts(&merged.submissions[i]) == verdicts(s) => {}
                Some(i) => {
                    return Err(Error::input(format!(
                        "{}: submission {} has another result in {} ({})",
                        path.display(),
                        s.name,
                        from[i].display(),
                        difference(&merged.submissions[i], s)
                    ))
                    .with_next("merge the reports of one grading of the class: regrade the shard that differs with --results DIR, then merge DIR"));
                }
                None => {
                    from.push(path);
                    merged.submissions.push(s.clone());
                }
            }
        }
    }
    // The order one runner would have graded them in (`shard` sorts paths).
    merged.submissions.sort_by(|a, b| a.name.cmp(&b.name));
    merged.exit_code = exit_code_of(&merged.submissions);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::points::tests::submission;
    use crate::exit::ExitCode;

    fn shard(k: usize, n: usize, names: &[&str]) -> GradeReport {
        let submissions: Vec<_> = names
            .iter()
            .map(|name| {
                let mut s = submission(&[2; 8], &[2, 2, 2, 1, 2, 2, 2, 2]);
                s.name = name.to_string();
                s
            })
            .collect();
        GradeReport {
            schema: 1,
            fencelab_version: "0.1.0".into(),
            suite: crate::lab::suite::digest(),
            min_score: 80.0,
            test_limit_secs: 10.0,
            build_limit_secs: 600.0,
            budget_secs: Some(15.0),
            shard: Some((k, n)),
            weights: crate::lab::course::Weights::default().by_slug(),
            correct_implementations: Vec::new(),
            freedoms: Default::default(),
            exit_code: exit_code_of(&submissions),
            submissions,
        }
    }

    fn write(dir: &Path, name: &str, report: &GradeReport) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string_pretty(report).unwrap()).unwrap();
        path
    }

    #[test]
    fn shards_merge_into_one_report_in_grading_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "shard-1.json", &shard(1, 2, &["a.rs", "c.rs"]));
        let b = write(dir.path(), "shard-2.json", &shard(2, 2, &["b.rs"]));
        let merged = merge(&[b, a]).unwrap();
        let names: Vec<&str> = merged.submissions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a.rs", "b.rs", "c.rs"]);
        assert_eq!(merged.shard, None);
        assert_eq!(merged.exit_code, ExitCode::Success);
        // What is read back is what was written.
        assert_eq!(
            serde_json::to_value(&merged.submissions[0]).unwrap(),
            serde_json::to_value(&shard(1, 2, &["a.rs"]).submissions[0]).unwrap()
        );
    }

    /// A Japanese screen of a merged report words fencelab's sentences as
    /// the run's own screen does (issue 47): they are data in the JSON, not
    /// English. Fails where a report keeps only the English `message`.
    #[test]
    fn a_merged_report_words_a_crash_in_the_screens_language() {
        use crate::bridge::said::{How, Said};
        use crate::engine::outcome::{FailureKind, TestOutcome};
        let mut report = shard(1, 1, &["a.rs"]);
        let ended = Said::ProcessEnded {
            call: "lease.claim".into(),
            how: How::Signal { signal: 6 },
        };
        let failed = report.submissions[0]
            .tests
            .iter_mut()
            .find(|t| !t.outcome.passed());
        failed.unwrap().outcome = TestOutcome::Failed {
            kind: FailureKind::Crashed,
            message: format!("{}\n  {}", ended.marked(), Said::Confirmed.marked()),
        };
        let dir = tempfile::tempdir().unwrap();
        let merged = merge(&[write(dir.path(), "shard-1.json", &report)]).unwrap();
        let layout = crate::output::printer::Layout::plain()
            .with_width(80)
            .in_lang(crate::lab::lang::Lang::Ja);
        let screen = super::super::render_grade(&layout, &merged);
        assert_eq!(screen, super::super::render_grade(&layout, &report));
        assert!(
            screen.contains("実装のプロセスが lease.claim() の途中で"),
            "{screen}"
        );
        assert!(!screen.contains("during"), "{screen}");
    }

    #[test]
    fn shards_of_another_suite_or_options_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "shard-1.json", &shard(1, 2, &["a.rs"]));
        let mut other = shard(2, 2, &["b.rs"]);
        other.suite = "sha256:0000".into();
        let b = write(dir.path(), "shard-2.json", &other);
        let err = merge(&[a.clone(), b]).unwrap_err();
        assert!(
            err.message
                .contains("shard-2.json: graded with suite sha256:0000, but")
                && err.message.contains("shard-1.json with suite sha256:"),
            "{}",
            err.message
        );
        assert!(err.next.is_some());
        // Each report is named with its suite.
        assert!(
            err.message.contains("shard-2.json: suite sha256:0000")
                && err.message.contains("shard-1.json: suite sha256:"),
            "{}",
            err.message
        );
        let mut other = shard(2, 2, &["b.rs"]);
        other.min_score = 50.0;
        let b = write(dir.path(), "shard-2.json", &other);
        let err = merge(&[a.clone(), b]).unwrap_err();
        assert!(err.message.contains("--min-score 50"), "{}", err.message);
        // The budget changes scores: shards graded under two do not merge.
        for (budget, shown) in [(Some(30.0), "--budget 30"), (None, "--budget none")] {
            let mut other = shard(2, 2, &["b.rs"]);
            other.budget_secs = budget;
            let b = write(dir.path(), "shard-2.json", &other);
            let err = merge(&[a.clone(), b]).unwrap_err();
            assert!(
                err.message
                    .contains(&format!("shard-2.json: graded with {shown}, but"))
                    && err.message.contains("with --budget 15"),
                "{}",
                err.message
            );
        }
        // So do the weights of a course file.
        let mut other = shard(2, 2, &["b.rs"]);
        other.weights.insert("release".into(), 3.0);
        let b = write(dir.path(), "shard-2.json", &other);
        let err = merge(&[a.clone(), b]).unwrap_err();
        assert!(
            err.message.contains("graded with step weights") && err.message.contains("release 3"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_missing_shard_or_a_duplicate_with_another_result_is_refused_and_a_same_one_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "shard-1.json", &shard(1, 3, &["a.rs"]));
        let c = write(dir.path(), "shard-3.json", &shard(3, 3, &["c.rs"]));
        let err = merge(&[a.clone(), c.clone()]).unwrap_err();
        assert!(
            err.message.contains("shard(s) 2/3 missing"),
            "{}",
            err.message
        );
        // A retried shard (the same report twice; timings aside) counts once.
        let b = write(dir.path(), "shard-2.json", &shard(2, 3, &["b.rs"]));
        let mut retried = shard(1, 3, &["a.rs"]);
        for t in &mut retried.submissions[0].tests {
            t.secs += 1.0;
        }
        let retried = write(dir.path(), "shard-1-retry.json", &retried);
        let merged = merge(&[a.clone(), b.clone(), c.clone(), retried]).unwrap();
        assert_eq!(merged.submissions.len(), 3);
        // One that says otherwise is refused, naming both and the difference.
        let mut other = shard(1, 3, &["a.rs"]);
        other.submissions[0].score = 50.0;
        let other = write(dir.path(), "shard-1-other.json", &other);
        let err = merge(&[a, b, c, other]).unwrap_err();
        assert!(
            err.message
                .contains("shard-1-other.json: submission a.rs has another result in")
                && err.message.contains("shard-1.json (score 93.75 and 50)"),
            "{}",
            err.message
        );
        assert!(err.next.is_some());
    }

    #[test]
    fn a_results_directory_gives_the_reports_its_runs_left_and_an_empty_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("shards")).unwrap();
        let err = merge(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            err.message.contains("no report of a grading in it"),
            "{}",
            err.message
        );
        write(
            &dir.path().join("shards"),
            "1-of-2-x.json",
            &shard(1, 2, &["a.rs"]),
        );
        let b = write(dir.path(), "shard-2.json", &shard(2, 2, &["b.rs"]));
        let merged = merge(&[dir.path().to_path_buf(), b]).unwrap();
        assert_eq!(merged.submissions.len(), 2);
    }

    #[test]
    fn a_file_that_is_not_a_report_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junit.xml");
        std::fs::write(&path, "<testsuites/>").unwrap();
        let err = merge(&[path]).unwrap_err();
        assert!(
            err.message
                .contains("junit.xml:1:1: not a report of `fencelab grade --json`"),
            "{}",
            err.message
        );
    }
}
