//! Reading what `grade --json` wrote (its documented schema, nothing of
//! `grade`'s code): the fields a class report needs, from report files or
//! the results directories of `grade --results DIR`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;
use crate::lab::edition::Edition;
use crate::lab::lang::Text;

/// Every submission the reports hold, once each, by name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Read {
    pub submissions: Vec<Submission>,
    /// The report files read (a submission's source is looked for beside them).
    pub files: Vec<PathBuf>,
    /// Learners' tests (`grade --tests`), not implementations.
    pub tests: bool,
    /// The freedoms the reports name, with their clauses, by id.
    pub freedoms: BTreeMap<String, Freedom>,
    /// The single-freedom variants the tests were judged against.
    pub variants: BTreeSet<String>,
}

impl Read {
    /// `id` is the reference or a single-freedom variant: its `claim_many`
    /// races as the reference's runs decide, so its verdicts are no chance.
    pub(crate) fn scheduled(&self, id: &str) -> bool {
        id == "reference"
            || self.variants.contains(id)
            || self.variants.is_empty() && id.starts_with("variant-")
    }
}

/// A freedom of the contract, as `grade --tests` reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Freedom {
    pub assumed: Text,
    pub contract: String,
}

/// One of a learner's tests as `grade --tests` judged it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct LearnerTest {
    pub test: String,
    /// `valid`, or why not (`fails-on-reference`, `assumes-a-freedom`, ...).
    pub verdict: String,
    #[serde(default)]
    pub assumed: Vec<String>,
    #[serde(default)]
    pub fails_on: Vec<FailsOn>,
    #[serde(default)]
    pub observation: Option<Observed>,
    #[serde(default)]
    pub misconceptions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct FailsOn {
    pub implementation: String,
    pub runs: usize,
    pub failed: usize,
}

impl FailsOn {
    /// As a verdict vector shows it: `id`, or `id (racy)` when it gave both.
    pub(crate) fn shown(&self) -> String {
        match self.failed < self.runs {
            true => format!("{} (racy)", self.implementation),
            false => self.implementation.clone(),
        }
    }
}

/// What a test that fails on the reference observed there.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
pub(crate) struct Observed {
    pub what: String,
    pub expected: String,
    pub actual: String,
}

impl Read {
    /// The edition graded: Python when its files are `.py`.
    pub(crate) fn edition(&self) -> Edition {
        (self.submissions.first()).map_or(Edition::Rust, |s| Edition::of_file(&s.file))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Submission {
    pub name: String,
    pub file: String,
    /// It compiled and could be graded.
    pub graded: bool,
    pub passed: BTreeSet<String>,
    pub failed: BTreeSet<String>,
    /// Per step: (passed, total).
    pub steps: BTreeMap<u32, (usize, usize)>,
    /// Its invalid tests and why (learners' tests only).
    pub invalid: Vec<(String, String)>,
    /// Each of its tests judged (learners' tests, from a report that says).
    pub learner_tests: Vec<LearnerTest>,
}

impl Submission {
    /// It passes every test of step `step`.
    pub(crate) fn passes_step(&self, step: u32) -> bool {
        self.graded && self.steps.get(&step).is_some_and(|(p, t)| p == t && *t > 0)
    }
}

#[derive(Deserialize)]
struct ReportFile {
    schema: u32,
    #[serde(default)]
    suite: String,
    submissions: Vec<SubmissionFile>,
    #[serde(default)]
    freedoms: BTreeMap<String, Freedom>,
    #[serde(default)]
    correct_implementations: Vec<CorrectFile>,
}

#[derive(Deserialize)]
struct CorrectFile {
    id: String,
    freedoms: Vec<String>,
}

#[derive(Deserialize, Clone, PartialEq)]
struct SubmissionFile {
    name: String,
    file: String,
    #[serde(default)]
    compile_errors: Option<String>,
    #[serde(default)]
    unusable: Option<String>,
    #[serde(default)]
    invalid_tests: Option<String>,
    #[serde(default)]
    steps: Vec<StepFile>,
    #[serde(default)]
    tests: Vec<TestFile>,
    #[serde(default)]
    learner_tests: Vec<LearnerTest>,
}

#[derive(Deserialize, Clone, PartialEq)]
struct StepFile {
    step: u32,
    passed: usize,
    total: usize,
}

#[derive(Deserialize, Clone, PartialEq)]
struct TestFile {
    test: String,
    outcome: String,
}

const NEXT: &str = "give fencelab class the JSON reports of `fencelab grade --json FILE` \
                    (or its --results directories)";

/// The submissions of every report at `paths` (a report file, or a results
/// directory: every report in its `shards/`).
pub(crate) fn reports(paths: &[PathBuf]) -> Result<Read, Error> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let shards = path.join("shards");
            let mut found: Vec<PathBuf> = std::fs::read_dir(&shards)
                .map_err(|_| {
                    Error::input(format!(
                        "{} is not a results directory of `grade --results DIR` (it has no shards/)",
                        path.display()
                    ))
                    .with_next(NEXT)
                })?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut by_name: BTreeMap<String, (PathBuf, SubmissionFile)> = BTreeMap::new();
    let mut kind: Option<(PathBuf, bool)> = None;
    let mut suite: Option<(PathBuf, String)> = None;
    let mut freedoms = BTreeMap::new();
    let mut variants = BTreeSet::new();
    for file in &files {
        let report = read_one(file)?;
        freedoms.extend(report.freedoms);
        variants.extend(
            (report.correct_implementations.into_iter())
                .filter(|c| c.freedoms.len() == 1)
                .map(|c| c.id),
        );
        let tests = report.suite.starts_with("learner-tests-");
        match &kind {
            Some((first, was)) if *was != tests => {
                return Err(Error::input(format!(
                    "{} grades {} and {} grades {}: one class report reads one kind",
                    first.display(),
                    what(*was),
                    file.display(),
                    what(tests)
                ))
                .with_next("make one class report of `grade` and another of `grade --tests`"));
            }
            Some(_) => {}
            None => kind = Some((file.clone(), tests)),
        }
        // Reports of two suites (or two sets of mutants) do not add up.
        match &suite {
            Some((first, was)) if *was != report.suite => {
                return Err(Error::input(format!(
                    "{} was graded by suite {} and {} by suite {}: one class report reads one suite's reports",
                    first.display(),
                    was,
                    file.display(),
                    report.suite
                ))
                .with_next("grade the whole class again with one fencelab, or report on each part apart"));
            }
            Some(_) => {}
            None => suite = Some((file.clone(), report.suite.clone())),
        }
        for s in report.submissions {
            match by_name.get(&s.name) {
                Some((first, seen)) if *seen != s => {
                    return Err(Error::input(format!(
                        "{} is in {} and in {} with other results",
                        s.name,
                        first.display(),
                        file.display()
                    ))
                    .with_next(
                        "leave out the older report: each submission's result is read once",
                    ));
                }
                Some(_) => {}
                None => {
                    by_name.insert(s.name.clone(), (file.clone(), s));
                }
            }
        }
    }
    let submissions: Vec<Submission> = by_name.into_values().map(|(_, s)| submission(s)).collect();
    let editions: BTreeSet<&str> = (submissions.iter())
        .map(|s| Edition::of_file(&s.file).code())
        .collect();
    if editions.len() > 1 {
        return Err(Error::input(
            "the reports grade Python and Rust submissions: one class report reads one edition",
        )
        .with_next("make one class report per edition"));
    }
    Ok(Read {
        submissions,
        files,
        tests: kind.is_some_and(|(_, t)| t),
        freedoms,
        variants,
    })
}

fn what(tests: bool) -> &'static str {
    if tests {
        "learners' tests"
    } else {
        "implementations"
    }
}

fn read_one(path: &Path) -> Result<ReportFile, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("read the report", path, e).with_next(NEXT))?;
    let report: ReportFile = serde_json::from_str(&text).map_err(|e| {
        Error::input(format!(
            "{}:{}:{}: not a report of `fencelab grade --json`: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
        .with_next(NEXT)
    })?;
    if report.schema != 1 {
        return Err(Error::input(format!(
            "{}: a report of schema {}, and this fencelab reads schema 1",
            path.display(),
            report.schema
        ))
        .with_next("read it with the fencelab that wrote it"));
    }
    Ok(report)
}

fn submission(s: SubmissionFile) -> Submission {
    let (passed, failed): (Vec<&TestFile>, Vec<&TestFile>) =
        s.tests.iter().partition(|t| t.outcome == "passed");
    Submission {
        graded: s.compile_errors.is_none() && s.unusable.is_none(),
        passed: passed.iter().map(|t| t.test.clone()).collect(),
        failed: failed.iter().map(|t| t.test.clone()).collect(),
        steps: s
            .steps
            .iter()
            .map(|st| (st.step, (st.passed, st.total)))
            .collect(),
        invalid: s.invalid_tests.as_deref().map(invalid).unwrap_or_default(),
        learner_tests: s.learner_tests,
        name: s.name,
        file: s.file,
    }
}

/// `a (why), b (why, more)` as `grade --tests` writes it: (test, why) each.
fn invalid(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(" (") {
        let test = rest[..open].trim_start_matches([',', ' ']).to_string();
        let after = &rest[open + 2..];
        // The reason ends at the parenthesis that closes it.
        let mut depth = 1;
        let Some(close) = after.char_indices().find_map(|(i, c)| {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            (depth == 0).then_some(i)
        }) else {
            break;
        };
        out.push((test, after[..close].to_string()));
        rest = &after[close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_tests_are_read_as_grade_writes_them() {
        assert_eq!(
            invalid("a (assumes claim-many-winner), b_2 (racy on reference), c (assumes x, y)"),
            [
                ("a".into(), "assumes claim-many-winner".into()),
                ("b_2".into(), "racy on reference".into()),
                ("c".into(), "assumes x, y".into())
            ]
        );
        assert!(invalid("").is_empty());
    }
}
