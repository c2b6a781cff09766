//! `grade --merge shard-*.json`: the JSON reports of `--shard K/N` runs
//! (a CI's parallel runners) combined into one report, from which every
//! format is written as if one runner had graded them all.
//!
//! Shards are merged only when they were graded alike: the same fencelab
//! version, the same suite (a digest of its sources), the same options
//! (minimum score, test and build limits) and the same N, with each K once
//! and none missing, and no submission twice. Anything else is refused with
//! the file and what differs, since a gradebook made of unlike shards would
//! look right and be wrong.

use std::path::{Path, PathBuf};

use crate::commands::grade::{GradeReport, exit_code_of};
use crate::error::Error;

const NEXT: &str = "grade every shard with the same fencelab build and options \
                    (`--shard K/N ... --json shard-K.json`), then merge them again";

/// Reads one shard report.
pub fn read(path: &Path) -> Result<GradeReport, Error> {
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
            "number of shards",
            report
                .shard
                .map_or("none (not a shard)".to_string(), |(_, n)| n.to_string()),
        ),
    ]
}

/// Merges the reports at `paths` (in any order) into one.
pub fn merge(paths: &[PathBuf]) -> Result<GradeReport, Error> {
    let mut reports: Vec<(PathBuf, GradeReport)> = Vec::new();
    for path in paths {
        reports.push((path.clone(), read(path)?));
    }
    let Some((first_path, first)) = reports.first() else {
        return Err(Error::input("--merge needs the shard reports to merge")
            .with_next("give them after the flag: fencelab grade --merge shard-*.json"));
    };
    let expected = identity(first);
    for (path, report) in &reports[1..] {
        for ((what, want), (_, got)) in expected.iter().zip(identity(report)) {
            if *want != got {
                return Err(Error::input(format!(
                    "{}: graded with {what} {got}, but {} with {what} {want}: shards graded differently cannot be merged",
                    path.display(),
                    first_path.display()
                ))
                .with_next(NEXT));
            }
        }
    }
    if let Some((_, n)) = first.shard {
        let mut seen: Vec<Option<&PathBuf>> = vec![None; n];
        for (path, report) in &reports {
            let (k, _) = report.shard.expect("the same N, checked above");
            if let Some(other) = seen[k - 1] {
                return Err(Error::input(format!(
                    "{} and {} are both shard {k}/{n}",
                    other.display(),
                    path.display()
                ))
                .with_next("give each shard's report once"));
            }
            seen[k - 1] = Some(path);
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
    let mut from: Vec<(String, &PathBuf)> = Vec::new();
    for (path, report) in &reports {
        for s in &report.submissions {
            if let Some((_, other)) = from.iter().find(|(name, _)| *name == s.name) {
                return Err(Error::input(format!(
                    "{}: submission {} is also in {}",
                    path.display(),
                    s.name,
                    other.display()
                ))
                .with_next("give each shard's report once, from one grading of the class"));
            }
            from.push((s.name.clone(), path));
            merged.submissions.push(s.clone());
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
            shard: Some((k, n)),
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
        let mut other = shard(2, 2, &["b.rs"]);
        other.min_score = 50.0;
        let b = write(dir.path(), "shard-2.json", &other);
        let err = merge(&[a.clone(), b]).unwrap_err();
        assert!(err.message.contains("--min-score 50"), "{}", err.message);
    }

    #[test]
    fn a_missing_or_doubled_shard_or_submission_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "shard-1.json", &shard(1, 3, &["a.rs"]));
        let c = write(dir.path(), "shard-3.json", &shard(3, 3, &["c.rs"]));
        let err = merge(&[a.clone(), c.clone()]).unwrap_err();
        assert!(
            err.message.contains("shard(s) 2/3 missing"),
            "{}",
            err.message
        );
        let err = merge(&[a.clone(), a.clone()]).unwrap_err();
        assert!(
            err.message.contains("are both shard 1/3"),
            "{}",
            err.message
        );
        let b = write(dir.path(), "shard-2.json", &shard(2, 3, &["a.rs"]));
        let err = merge(&[a, b, c]).unwrap_err();
        assert!(
            err.message
                .contains("shard-2.json: submission a.rs is also in"),
            "{}",
            err.message
        );
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
