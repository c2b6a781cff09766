//! `fencelab grade`: grades learners' submissions for CI, with the same engine
//! as `verify` and `check`.
//!
//! Only one file is taken from a submission (a learner crate's `src/lib.rs`, or
//! a single `.rs` file); the suite, the manifest and the dependencies are the
//! grader's. Every test runs in a judge process of its own against the
//! submission in a process of its own, so the verdict is the judge's exit status:
//! nothing the submission prints, and no exit status it can produce, decides it.
//! Each step weighs the same; a step's score is the share of its tests passed.

pub mod gradescope;
pub mod junit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::engine::builder::Implementation;
use crate::engine::outcome::{StepTally, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Event, Request, Scenario, ScenarioKind, ScenarioResult};
use crate::error::Error;
use crate::lab::suite;
use crate::lab::worksheet::SLUGS;

pub use crate::engine::policy::{DEFAULT_BUILD_LIMIT, DEFAULT_TEST_LIMIT};

/// What to grade, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    /// The least score (0 to 100) that passes the gate.
    pub min_score: f64,
    pub test_limit: Duration,
    pub build_limit: Duration,
    pub jobs: usize,
    /// Grade only the K-th of N shares of `paths` (1-based K).
    pub shard: Option<(usize, usize)>,
}

/// Exit codes of `grade`.
pub mod exit {
    /// Every submission reached the gate.
    pub const PASSED: i32 = 0;
    /// Some submission scored below the gate.
    pub const BELOW_GATE: i32 = 1;
    /// Some input could not be used (missing, not UTF-8, not the API).
    pub const UNUSABLE_INPUT: i32 = 2;
    /// Some submission does not compile.
    pub const DOES_NOT_COMPILE: i32 = 3;
}

/// One submission, read and checked.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The path as given.
    pub name: String,
    /// The file graded.
    pub file: PathBuf,
    pub source: String,
}

/// The whole result, as `--json` writes it (schema in README.md).
#[derive(Debug, Clone, Serialize)]
pub struct GradeReport {
    pub schema: u32,
    pub min_score: f64,
    pub test_limit_secs: f64,
    pub submissions: Vec<SubmissionReport>,
    pub exit_code: i32,
}

#[derive(Debug, Clone, Serialize)]
pub struct SubmissionReport {
    pub name: String,
    pub file: String,
    /// 0 to 100; 0 when it does not compile.
    pub score: f64,
    pub passed_gate: bool,
    /// The compiler's messages, when it does not compile.
    pub compile_errors: Option<String>,
    pub steps: Vec<StepScore>,
    pub tests: Vec<GradedTest>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepScore {
    pub step: u32,
    pub slug: &'static str,
    pub passed: usize,
    pub total: usize,
    /// passed / total, 0 to 1.
    pub score: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GradedTest {
    pub test: String,
    pub step: u32,
    #[serde(flatten)]
    pub outcome: TestOutcome,
    pub secs: f64,
}

/// Reads the submission at `path`: a learner crate (its `src/lib.rs`) or a
/// single `.rs` file with the contract's API at its top level.
pub fn read_submission(path: &Path) -> Result<Submission, Error> {
    let file = if path.is_dir() {
        let lib = path.join("src").join("lib.rs");
        if !lib.is_file() {
            return Err(Error::input(format!(
                "{} is a directory without src/lib.rs, so it is not a learner crate",
                path.display()
            ))
            .with_next("give a crate made by `fencelab new`, or the .rs file to grade"));
        }
        lib
    } else if path.is_file() {
        path.to_path_buf()
    } else {
        return Err(Error::input(format!("{} does not exist", path.display()))
            .with_next("give the path of a learner crate or of a .rs file"));
    };
    let bytes = std::fs::read(&file).map_err(|e| Error::io("read", &file, e))?;
    let source = String::from_utf8(bytes).map_err(|e| {
        let at = crate::error::Location::at(
            &String::from_utf8_lossy(e.as_bytes()),
            e.utf8_error().valid_up_to(),
        );
        Error::input(format!(
            "{}:{}:{}: the file is not UTF-8 text (an invalid byte at offset {})",
            file.display(),
            at.line,
            at.column,
            e.utf8_error().valid_up_to()
        ))
        .with_next("save the file as UTF-8 and submit it again")
    })?;
    if let Some((line, what)) = compile_time_read(&source) {
        return Err(Error::input(format!(
            "{}:{line}: `{what}` reads files or the environment while compiling, which a submission may not do \
             (it would read the grader's machine)",
            file.display()
        ))
        .with_next("remove it: a submission is one self-contained file"));
    }
    let missing = missing_api(&source);
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "{} does not have the contract's API at its top level: missing {}",
            file.display(),
            missing.join(", ")
        ))
        .with_next("start from the API `fencelab new` writes (src/lib.rs), keeping every name and signature"));
    }
    Ok(Submission {
        name: submission_name(path),
        file,
        source,
    })
}

/// A submission's name in reports: the path as given, or the directory's
/// own name when the path says only "." or "..".
fn submission_name(path: &Path) -> String {
    let given = path.display().to_string();
    if path.file_name().is_some() {
        return given;
    }
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or(given)
}

/// The first line (1-based) that reads files or the environment at compile
/// time, and what it uses: `include!`, `include_str!`, `include_bytes!`,
/// `env!`, `option_env!`, or a `#[path]` attribute.
pub fn compile_time_read(source: &str) -> Option<(usize, &'static str)> {
    const READERS: [&str; 6] = [
        "include_str",
        "include_bytes",
        "include!",
        "option_env",
        "env!",
        "path",
    ];
    source.lines().enumerate().find_map(|(i, line)| {
        let code = line.split("//").next().unwrap_or("");
        READERS.iter().find_map(|reader| {
            let hit = match *reader {
                "path" => code.contains("#[path") || code.contains("#![path"),
                "env!" => code.match_indices("env!").any(|(at, _)| {
                    !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                }),
                other => code.contains(other),
            };
            hit.then_some((i + 1, *reader))
        })
    })
}

/// The items of the API that `source` does not declare (a textual check;
/// wrong signatures are the compiler's to report).
pub fn missing_api(source: &str) -> Vec<String> {
    let declares = |kind: &str, name: &str| {
        source.lines().any(|line| {
            let line = line.trim_start();
            line.strip_prefix("pub ")
                .and_then(|rest| rest.trim_start().strip_prefix(kind))
                .and_then(|rest| rest.trim_start().strip_prefix(name))
                .is_some_and(|rest| rest.starts_with(['(', '<', ' ', '{']) || rest.is_empty())
        })
    };
    let mut missing: Vec<String> = Vec::new();
    for (kind, name) in [("struct", "Job"), ("enum", "LeaseError")] {
        if !declares(kind, name) {
            missing.push(format!("pub {kind} {name}"));
        }
    }
    for slug in SLUGS {
        if !declares("fn", slug) {
            missing.push(format!("pub fn {slug}"));
        }
    }
    missing
}

/// The paths of shard `k` of `n` (1-based), in a stable order.
pub fn shard(paths: &[PathBuf], k: usize, n: usize) -> Vec<PathBuf> {
    let mut sorted = paths.to_vec();
    sorted.sort();
    sorted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k - 1)
        .map(|(_, p)| p)
        .collect()
}

/// Grades `submissions` (read with `read_submission`).
pub fn run(
    options: &Options,
    submissions: &[Submission],
    scratch: &Scratch,
    mut progress: impl FnMut(usize, usize),
) -> Result<GradeReport, Error> {
    let implementations: Vec<Implementation> = submissions
        .iter()
        .map(|s| Implementation {
            shown_path: shown(&s.file),
            source: s.source.clone(),
        })
        .collect();
    let tests = suite::tests();
    let policy = Policy::of(Trust::Submissions)
        .with_limits(Some(options.test_limit), Some(options.build_limit));
    let request = Request {
        policy,
        scenarios: (0..implementations.len())
            .map(|i| Scenario {
                kind: ScenarioKind::Tests,
                implementation: i,
                tests: tests.clone(),
            })
            .collect(),
        implementations,
        jobs: options.jobs,
    };
    let run = engine::run(scratch, &request, &mut |event| {
        if let Event::Trial { done, total } = event {
            progress(done, total);
        }
    })?;
    let mut reports = Vec::new();
    for (i, submission) in submissions.iter().enumerate() {
        let compile_errors = match &run.results[i] {
            ScenarioResult::Unviable { errors } => Some(strip_grader_paths(errors)),
            _ => None,
        };
        let results: BTreeMap<&str, (&TestOutcome, f64)> = run.results[i]
            .tests()
            .unwrap_or_default()
            .iter()
            .map(|t| {
                (
                    t.test.name.as_str(),
                    (t.outcome(), t.runs[0].duration.as_secs_f64()),
                )
            })
            .collect();
        let graded: Vec<GradedTest> = tests
            .iter()
            .filter_map(|t| {
                results
                    .get(t.name.as_str())
                    .map(|(outcome, secs)| GradedTest {
                        test: t.name.clone(),
                        step: t.step,
                        outcome: (*outcome).clone(),
                        secs: *secs,
                    })
            })
            .collect();
        // A submission that does not compile has no outcomes: it passed nothing.
        let not_run = TestOutcome::Failed {
            kind: crate::engine::outcome::FailureKind::Crashed,
            message: "not run: the submission does not compile".to_string(),
        };
        let tallies = StepTally::of(tests.iter().map(|t| {
            (
                t,
                results.get(t.name.as_str()).map_or(&not_run, |(o, _)| *o),
            )
        }));
        let steps: Vec<StepScore> = tallies
            .iter()
            .map(|tally| StepScore {
                step: tally.step,
                slug: SLUGS[tally.step as usize - 1],
                passed: tally.passed,
                total: tally.total,
                score: tally.passed as f64 / tally.total.max(1) as f64,
            })
            .collect();
        // The gate compares the exact score; reports show it to 1/100.
        let exact = if compile_errors.is_some() {
            0.0
        } else {
            steps.iter().map(|s| s.score).sum::<f64>() / steps.len() as f64 * 100.0
        };
        let score = if compile_errors.is_some() {
            0.0
        } else {
            (steps.iter().map(|s| s.score).sum::<f64>() / steps.len() as f64 * 100.0 * 100.0)
                .round()
                / 100.0
        };
        reports.push(SubmissionReport {
            name: submission.name.clone(),
            file: shown(&submission.file),
            score,
            passed_gate: compile_errors.is_none() && exact >= options.min_score,
            compile_errors,
            steps,
            tests: graded,
        });
    }
    let exit_code = if reports.iter().any(|r| r.compile_errors.is_some()) {
        exit::DOES_NOT_COMPILE
    } else if reports.iter().any(|r| !r.passed_gate) {
        exit::BELOW_GATE
    } else {
        exit::PASSED
    };
    Ok(GradeReport {
        schema: 1,
        min_score: options.min_score,
        test_limit_secs: options.test_limit.as_secs_f64(),
        submissions: reports,
        exit_code,
    })
}

fn shown(file: &Path) -> String {
    crate::commands::verify::shown_path(file, &std::env::current_dir().unwrap_or_default())
}

/// The compiler's messages without the grader's own paths (home directory,
/// toolchain, registry), which say nothing to a learner.
fn strip_grader_paths(errors: &str) -> String {
    let mut text = errors.to_string();
    if let Some(home) = std::env::var_os("HOME").map(|h| h.to_string_lossy().into_owned())
        && !home.is_empty()
        && home != "/"
    {
        text = text.replace(&home, "~");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_check_names_what_is_missing() {
        assert!(missing_api(crate::lab::reference::REFERENCE).is_empty());
        let without_release =
            crate::lab::reference::REFERENCE.replace("pub fn release(", "pub fn give_back(");
        assert_eq!(missing_api(&without_release), vec!["pub fn release"]);
        assert_eq!(missing_api("fn main() {}").len(), 10);
    }

    #[test]
    fn reading_at_compile_time_is_found() {
        assert_eq!(compile_time_read(crate::lab::reference::REFERENCE), None);
        assert_eq!(
            compile_time_read("a\nconst K: &str = include_str!(\"/etc/passwd\");"),
            Some((2, "include_str"))
        );
        assert_eq!(
            compile_time_read("let t = env!(\"CI_JOB_TOKEN\");"),
            Some((1, "env!"))
        );
        assert_eq!(
            compile_time_read("let t = option_env!(\"X\");"),
            Some((1, "option_env"))
        );
        assert_eq!(
            compile_time_read("#[path = \"/x.rs\"]\nmod x;"),
            Some((1, "path"))
        );
        assert_eq!(
            compile_time_read("// include_str! in a comment is fine"),
            None
        );
    }

    #[test]
    fn shards_split_a_list_without_overlap() {
        let paths: Vec<PathBuf> = ["c", "a", "e", "b", "d"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let all: Vec<PathBuf> = (1..=2).flat_map(|k| shard(&paths, k, 2)).collect();
        assert_eq!(all.len(), 5);
        assert_eq!(
            shard(&paths, 1, 2),
            ["a", "c", "e"].map(PathBuf::from).to_vec()
        );
    }
}
