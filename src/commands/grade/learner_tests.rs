//! `fencelab grade --tests`: learners' own tests graded for CI, with the same
//! reports as implementations (JSON, JUnit, Gradescope). Validity is
//! required: a suite with a test that fails on a correct implementation scores
//! 0, and its reports say which test and where. Otherwise the score is its
//! thoroughness: each step weighs as the course says, and a step's share is the share of
//! its mutants the tests catch. In the reports, each mutant is one "test",
//! passed when caught.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::commands::grade::cli::GradeArgs;
use crate::commands::grade::{GradeReport, GradedTest, StepScore, SubmissionReport};
use crate::commands::{jobs, project_root, scratch, seconds};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::error::Error;
use crate::judging::{JudgedTest, MissedMutant, StepThoroughness};
use crate::judging::{Judges, LearnerTests, Options, TestsReport, judge, read};
use crate::lab::course::{Reveal, Weights};
use crate::lab::lang::Text;
use crate::output::printer::{Printer, Verb};
use crate::output::progress::Trials;

/// Grades the test suites at `paths` as `args` says; the caller prints and
/// writes the reports.
pub(crate) fn grade(
    args: &GradeArgs,
    paths: &[PathBuf],
    shard: Option<(usize, usize)>,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<GradeReport, Error> {
    // A file that cannot be read is its learner's 0, with the reason; the
    // others are graded all the same.
    let mut suites: Vec<LearnerTests> = Vec::new();
    let mut unusable: Vec<(usize, SubmissionReport)> = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        match read(path) {
            Ok(tests) => suites.push(tests),
            Err(err) => unusable.push((i, unusable_report(path, &err.to_string()))),
        }
    }
    // One run judges one edition's tests: against the Python reference, wheats
    // and mutants, or the Rust ones.
    if let (Some(py), Some(rs)) = (
        suites.iter().find(|t| t.python()),
        suites.iter().find(|t| !t.python()),
    ) {
        return Err(Error::input(format!(
            "{} holds Python tests and {} does not: one run judges one edition of the lab",
            py.name, rs.name
        ))
        .with_next("grade the .py test files and the Rust ones in two runs"));
    }
    let judges = match suites.first() {
        Some(tests) => Judges::load_for(tests, args.mutants.as_deref(), args.wheats.as_deref())?,
        None => Judges::load(args.mutants.as_deref(), args.wheats.as_deref())?,
    };
    let scratch = scratch(cache, &project_root())?;
    let options = Options {
        jobs: jobs(args.jobs),
        timeout: seconds(args.timeout, "--timeout")?,
        build_timeout: seconds(args.build_timeout, "--build-timeout")?,
        weights: args.course_read.weights,
    };
    // The limits the tests ran under: the user's, else the policy's.
    let policy =
        Policy::of(Trust::LearnerTests).with_limits(options.timeout, options.build_timeout);
    let test_limit = policy.limit_after(None);
    let label = "  checking the wheats against the suite (once)";
    crate::judging::content::check(
        &judges,
        &scratch,
        options.jobs,
        &mut Trials::new(printer, label),
    )?;
    let mut submissions = Vec::new();
    for tests in &suites {
        printer.status(Verb::Grading, &format!("the tests of {}", tests.name));
        let running = &mut Trials::new(printer, "  running tests");
        let report = judge(tests, &judges, &options, &scratch, running)?;
        let report = tests.name_root_in(report).revealing(
            args.course_read.reveal,
            &judges.mutants,
            &judges.reference,
        );
        submissions.push(submission(
            &report,
            args.min_score(),
            &args.course_read.weights,
        ));
    }
    // In the order given.
    for (i, report) in unusable {
        submissions.insert(i.min(submissions.len()), report);
    }
    let exit_code = crate::commands::grade::exit_code_of(&submissions);

    // What graded: the mutants to catch and the wheats to pass on, so that
    // `--merge` refuses shards graded against other ones.
    let judged_by = crate::engine::scratch::hash_of(
        judges
            .mutants
            .iter()
            .flat_map(|m| [m.id.as_str(), m.find.as_str(), m.replace.as_str()])
            .chain(judges.wheats.wheats.iter().map(|w| w.id.as_str())),
    );
    Ok(GradeReport {
        schema: 1,
        fencelab_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: format!("learner-tests-{judged_by}"),
        min_score: args.min_score(),
        test_limit_secs: test_limit.as_secs_f64(),
        build_limit_secs: policy.build_limit.unwrap_or_default().as_secs_f64(),
        // The learner's tests run against trusted implementations: no budget.
        budget_secs: None,
        shard,
        weights: args.course_read.weights.by_slug(),
        correct_implementations: correct_implementations(&judges),
        freedoms: freedoms(&judges),
        submissions,
        exit_code,
    })
}

/// A correct implementation a learner's tests ran against: the reference,
/// a single-freedom variant (one freedom) or a full wheat.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CorrectImplementation {
    pub id: String,
    pub freedoms: Vec<String>,
}

/// A freedom of the contract: what a test failing for it assumed, and the
/// contract's clause that leaves it free.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct FreedomClause {
    pub assumed: Text,
    pub contract: String,
}

/// One of a learner's tests, as `fencelab class` groups them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct LearnerTest {
    pub test: String,
    /// `valid`, or why not (`racy`, `fails-on-reference`,
    /// `assumes-a-freedom`, `fails-on-a-full-wheat`, `no-verdict`).
    pub verdict: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed: Vec<String>,
    /// Its verdicts: the correct implementations it fails on, as judged.
    /// It is not shown to fail on any other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fails_on: Vec<FailsOn>,
    /// Failing on the reference: what it observed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observed>,
    /// Failing on the reference: the mutants whose behaviour it expects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misconceptions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct FailsOn {
    pub implementation: String,
    /// How many times it ran there, and how many of those failed.
    pub runs: usize,
    pub failed: usize,
}

/// What a failing test observed: the suite's `observation:` lines, or an
/// `assert_eq!`'s values (left the actual, right the expected), or the
/// failure's own last words. Untrusted text, each field capped.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Observed {
    pub what: String,
    pub expected: String,
    pub actual: String,
}

/// The longest field of an `Observed`, in characters: a class report
/// groups by it, and a learner's test can print anything.
const OBSERVED_CAP: usize = 200;

fn correct_implementations(judges: &Judges) -> Vec<CorrectImplementation> {
    let reference = CorrectImplementation {
        id: "reference".to_string(),
        freedoms: Vec::new(),
    };
    let wheats = (judges.wheats.wheats.iter()).map(|w| CorrectImplementation {
        id: w.id.clone(),
        freedoms: w.freedoms.clone(),
    });
    std::iter::once(reference).chain(wheats).collect()
}

fn freedoms(judges: &Judges) -> BTreeMap<String, FreedomClause> {
    let ids = (judges.wheats.wheats.iter()).flat_map(|w| w.freedoms.iter());
    ids.filter_map(|id| {
        let f = judges.wheats.freedom(id)?;
        Some((
            id.clone(),
            FreedomClause {
                assumed: f.assumed.clone(),
                contract: f.contract.clone(),
            },
        ))
    })
    .collect()
}

/// A judged test as the grade report carries it.
fn learner_test(t: &JudgedTest) -> LearnerTest {
    let verdict = match t.invalid {
        None => "valid".to_string(),
        Some(why) => serde_json::to_value(why)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    };
    let on_reference = (t.wrong_on.iter()).find(|w| w.implementation == "reference");
    LearnerTest {
        test: t.test.clone(),
        verdict,
        assumed: t.assumed.clone(),
        fails_on: (t.wrong_on.iter())
            .map(|w| FailsOn {
                implementation: w.implementation.clone(),
                runs: w.runs,
                failed: w.failed,
            })
            .collect(),
        observation: on_reference.map(|w| observed(&w.message)),
        misconceptions: t.misconceptions.clone(),
    }
}

/// What a failing test's `message` says it observed.
pub(crate) fn observed(message: &str) -> Observed {
    let cap = |s: &str| -> String {
        let s = s.trim();
        match s.char_indices().nth(OBSERVED_CAP) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_string(),
        }
    };
    if let Some(o) = crate::lab::observation::Observation::parse(message) {
        return Observed {
            what: cap(&o.what),
            expected: cap(&o.expected),
            actual: cap(&o.actual),
        };
    }
    // Not where it failed: the learner's line numbers differ.
    let lines: Vec<&str> = (message.lines())
        .filter(|l| !l.starts_with("panicked at ") && !l.trim().is_empty())
        .filter(|l| !l.starts_with("note: ") && !l.starts_with("stack backtrace"))
        .collect();
    let value =
        |name: &str| (lines.iter()).find_map(|l| l.trim_start().strip_prefix(name).map(&cap));
    if let Some(i) = lines.iter().position(|l| l.starts_with("assertion `left")) {
        let what = lines[i]
            .split_once(": ")
            .map_or(lines[i], |(_, custom)| custom);
        return Observed {
            what: cap(what),
            expected: value("right: ").unwrap_or_default(),
            actual: value("left: ").unwrap_or_default(),
        };
    }
    // A Python traceback: the failing line, then the exception.
    let last = lines.last().copied().unwrap_or_default();
    let source = (lines.iter().rev().skip(1))
        .find(|l| l.starts_with("    ") && !l.trim_start().starts_with("File "));
    Observed {
        what: cap(source.map_or(last, |s| s.trim())),
        expected: String::new(),
        actual: cap(if source.is_some() { last } else { "" }),
    }
}

/// One learner's judgement as a row of the grade report: each mutant a test,
/// passed when caught (by valid tests, and only when every test is valid).
/// A learner's tests that cannot be graded at all (a missing path, a file
/// that cannot be read): score 0, with `why`.
fn unusable_report(path: &Path, why: &str) -> SubmissionReport {
    SubmissionReport {
        name: path.display().to_string(),
        file: path.display().to_string(),
        score: 0.0,
        passed_gate: false,
        compile_errors: None,
        unusable: Some(why.to_string()),
        invalid_tests: None,
        steps: Vec::new(),
        tests: Vec::new(),
        learner_tests: Vec::new(),
    }
}

fn submission(report: &TestsReport, min_score: f64, weights: &Weights) -> SubmissionReport {
    let invalid: Vec<String> = report
        .tests
        .iter()
        .filter(|t| !t.valid)
        .map(|t| format!("{} ({})", t.test, t.why()))
        .collect();
    let not_counted = (!invalid.is_empty()).then(|| {
        format!(
            "not counted: these tests fail on a correct implementation: {}",
            invalid.join(", ")
        )
    });
    let mut tests = Vec::new();
    let mut steps = Vec::new();
    for st in &report.steps {
        for (i, (id, missed)) in mutants_of(st, report.reveal).into_iter().enumerate() {
            let outcome = match (&not_counted, missed) {
                (Some(why), _) => TestOutcome::Failed {
                    kind: FailureKind::Assertion,
                    message: why.clone(),
                },
                (None, Some(missed)) => TestOutcome::Failed {
                    kind: FailureKind::Assertion,
                    message: match (report.reveal, missed) {
                        (Reveal::Count, _) => "not caught".to_string(),
                        (_, Some(m)) => match &m.diff {
                            Some(diff) => format!("not caught: {}\n{diff}", m.title.en),
                            None => format!("not caught: {}", m.title.en),
                        },
                        (_, None) => "not caught".to_string(),
                    },
                },
                (None, None) => TestOutcome::Passed,
            };
            // Counted only: the k-th mutant of the step, caught ones first.
            let id = id.unwrap_or_else(|| format!("mutant-{}", i + 1));
            tests.push(GradedTest {
                test: format!("step{}::{id}", st.step),
                step: st.step,
                outcome,
                secs: 0.0,
            });
        }
        let passed = if not_counted.is_some() { 0 } else { st.caught };
        steps.push(StepScore {
            step: st.step,
            slug: st.slug,
            passed,
            total: st.total,
            score: passed as f64 / st.total.max(1) as f64,
            weight: weights.of(st.step),
        });
    }
    let score = if not_counted.is_some() {
        0.0
    } else {
        report.score
    };
    SubmissionReport {
        name: report.name.clone(),
        file: report.file.clone(),
        score,
        passed_gate: report.compile_errors.is_none() && not_counted.is_none() && score >= min_score,
        compile_errors: report.compile_errors.clone(),
        unusable: None,
        invalid_tests: (!invalid.is_empty()).then(|| invalid.join(", ")),
        steps,
        tests,
        learner_tests: report.tests.iter().map(learner_test).collect(),
    }
}

/// A step's mutants as the report's tests: (id, Some(missed) when missed).
/// When the course reveals a count only, no id: as many caught as were,
/// then the missed ones, each by its place.
fn mutants_of(
    st: &StepThoroughness,
    reveal: Reveal,
) -> Vec<(Option<String>, Option<Option<&MissedMutant>>)> {
    if reveal == Reveal::Count {
        let caught = (0..st.caught).map(|_| (None, None));
        let missed = (st.caught..st.total).map(|_| (None, Some(None)));
        return caught.chain(missed).collect();
    }
    let caught = (st.caught_mutants.iter()).map(|id| (Some(id.clone()), None));
    let missed = (st.missed.iter()).map(|m| (Some(m.id.clone()), Some(Some(m))));
    caught.chain(missed).collect()
}

#[cfg(test)]
mod tests;
