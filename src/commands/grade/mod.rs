//! `fencelab grade`: grades learners' submissions for CI, with the same engine
//! as `verify` and `check`.
//!
//! Only one file is taken from a submission (a learner crate's `src/lib.rs`, or
//! a single `.rs` file); the suite, the manifest and the dependencies are the
//! grader's. Every test runs in a judge process of its own against the
//! submission in a process of its own, so the verdict is the judge's exit status:
//! nothing the submission prints, and no exit status it can produce, decides it.
//! Each step weighs as the course file says (the same by default); a step's
//! score is the share of its tests passed.

pub(crate) mod bundle;
pub(crate) mod classroom;
pub(crate) mod cli;
pub(crate) mod csv;
pub(crate) mod github;
pub(crate) mod gradescope;
pub(crate) mod junit;
pub(crate) mod learner_tests;
pub(crate) mod merge;
pub(crate) mod points;
pub(crate) mod prairielearn;
mod render;
pub(crate) mod results;
pub(crate) mod shard;
mod submission;

pub(crate) use render::Live;
pub(crate) use render::render_grade;
pub(crate) use submission::{Submission, read_submission};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::builder::Implementation;
use crate::engine::outcome::{StepTally, TestOutcome};
use crate::engine::policy::Policy;
use crate::engine::scratch::Scratch;
use crate::engine::{self, Event, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::course::Weights;
use crate::lab::edition::Edition;
use crate::lab::suite;
use crate::lab::suite::SuiteFiles;
use crate::lab::worksheet::SLUGS;
use crate::output::progress::Progress;

/// What to grade, and how.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The least score (0 to 100) that passes the gate.
    pub min_score: f64,
    /// What the run trusts, and its limits (the user's on the policy's).
    pub policy: Policy,
    pub jobs: usize,
    /// Grade only the K-th of N shares of `paths` (1-based K).
    pub shard: Option<(usize, usize)>,
    /// Each step's weight in the score (the course file's).
    pub weights: Weights,
}

/// The whole result, as `--json` writes it (schema in README.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GradeReport {
    pub schema: u32,
    /// The version of fencelab that graded.
    #[serde(default)]
    pub fencelab_version: String,
    /// The suite that graded: a digest of its sources (`suite::digest`).
    #[serde(default)]
    pub suite: String,
    pub min_score: f64,
    pub test_limit_secs: f64,
    #[serde(default)]
    pub build_limit_secs: f64,
    /// What one submission's slow tests may take in total (`--budget`;
    /// `engine::hangs`), if there was a bound: it changes scores, so
    /// reports record it and shards graded under two budgets do not merge.
    #[serde(default)]
    pub budget_secs: Option<f64>,
    /// With `--shard K/N`: `[K, N]`.
    #[serde(default)]
    pub shard: Option<(usize, usize)>,
    /// Each step's weight in the scores, by slug (the course file's): it
    /// changes scores, so shards graded under two do not merge.
    #[serde(default = "equal_weights")]
    pub weights: BTreeMap<String, f64>,
    /// `grade --tests`: the correct implementations judged against, and the
    /// freedoms they take (the axes of each learner test's verdicts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub correct_implementations: Vec<learner_tests::CorrectImplementation>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub freedoms: BTreeMap<String, learner_tests::FreedomClause>,
    pub submissions: Vec<SubmissionReport>,
    pub exit_code: ExitCode,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SubmissionReport {
    pub name: String,
    pub file: String,
    /// 0 to 100; 0 when it does not compile or cannot be graded.
    pub score: f64,
    pub passed_gate: bool,
    /// The compiler's messages, when it does not compile.
    pub compile_errors: Option<String>,
    /// Why it could not be graded at all (a missing path, not UTF-8, no API,
    /// reading files while compiling); its score is then 0.
    #[serde(default)]
    pub unusable: Option<String>,
    /// `grade --tests`: the learner's tests that fail on a correct
    /// implementation, which make the suite invalid and its score 0 (judged,
    /// unlike `unusable`, but no mutant counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_tests: Option<String>,
    pub steps: Vec<StepScore>,
    pub tests: Vec<GradedTest>,
    /// `grade --tests`: each of the learner's tests, its verdicts and what
    /// it contradicts (`fencelab class` groups them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learner_tests: Vec<learner_tests::LearnerTest>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepScore {
    pub step: u32,
    pub slug: &'static str,
    pub passed: usize,
    pub total: usize,
    /// passed / total, 0 to 1.
    pub score: f64,
    /// Its weight in the score (the course file's; 1 unless said).
    pub weight: f64,
}

/// A step's score as read back (`grade --merge`): its slug becomes the
/// worksheet's own (`'static`) name.
#[derive(Deserialize)]
struct StepScoreRead {
    step: u32,
    slug: String,
    passed: usize,
    total: usize,
    score: f64,
    #[serde(default = "one")]
    weight: f64,
}

/// The weights of a report written before weights were: all the same.
fn equal_weights() -> BTreeMap<String, f64> {
    Weights::default().by_slug()
}

/// A step's weight in a report written before weights were.
fn one() -> f64 {
    1.0
}

impl<'de> Deserialize<'de> for StepScore {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = StepScoreRead::deserialize(deserializer)?;
        let slug = SLUGS
            .iter()
            .find(|s| **s == read.slug)
            .copied()
            .ok_or_else(|| {
                serde::de::Error::custom(format!("`{}` is not a step of the worksheet", read.slug))
            })?;
        Ok(StepScore {
            step: read.step,
            slug,
            passed: read.passed,
            total: read.total,
            score: read.score,
            weight: read.weight,
        })
    }
}

impl SubmissionReport {
    /// What its compile errors say it does: a Python module's come from
    /// compiling it or from importing it, so it "cannot be loaded".
    pub(crate) fn unviable(&self) -> &'static str {
        match self.edition() {
            Edition::Python => "cannot be loaded",
            Edition::Rust => "does not compile",
        }
    }

    /// The lab's edition it was graded in: a `.py` file is the Python one's.
    pub(crate) fn edition(&self) -> Edition {
        Edition::of_file(&self.file)
    }

    /// What a report shown to the learner (Gradescope's, PrairieLearn's,
    /// GitHub's annotations and summary, Classroom's, JUnit's) says of
    /// `test`'s failure: a Python submission's in Python's terms (`None`,
    /// `True`, a dict, `ValueError`, no Rust test's location), as `grade`
    /// and `check` print it; a Rust submission's as the suite wrote it.
    /// `None` when it passed. (`--json` keeps the suite's own words.)
    pub(crate) fn message(&self, test: &GradedTest) -> Option<String> {
        let message = test.outcome.message()?;
        Some(match self.edition() {
            Edition::Rust => message,
            Edition::Python => crate::output::observation::render_for(
                Edition::Python,
                &message,
                crate::output::style::Style::plain(),
                crate::lab::lang::Lang::En,
                0,
                usize::MAX,
            ),
        })
    }

    /// Why it could not be graded: it cannot be used at all, or it does not
    /// compile (what every report says in place of its tests).
    pub(crate) fn not_graded(&self) -> Option<&str> {
        self.unusable.as_deref().or(self.compile_errors.as_deref())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GradedTest {
    pub test: String,
    pub step: u32,
    #[serde(flatten)]
    pub outcome: TestOutcome,
    pub secs: f64,
}

/// A submission that cannot be graded at all (a missing path, a file that is
/// not UTF-8, no API, a forbidden macro): it scores 0, with its reason in
/// every report, and the others are graded all the same.
#[derive(Debug, Clone)]
pub(crate) struct Unusable {
    /// The path as given.
    pub name: String,
    /// The file it would be (the path itself when there is none).
    pub file: PathBuf,
    /// Why, with what to do next.
    pub reason: String,
}

/// Reads every path as a submission, in order; those that cannot be used are
/// kept with their reason.
pub(crate) fn read_all(paths: &[PathBuf]) -> Vec<Result<Submission, Unusable>> {
    paths
        .iter()
        .map(|path| {
            read_submission(path).map_err(|err| Unusable {
                name: path.display().to_string(),
                file: path.clone(),
                reason: err.to_string(),
            })
        })
        .collect()
}

/// Grades `inputs` (read with `read_all`): the usable ones in one engine run,
/// each unusable one as a score of 0 with its reason.
pub(crate) fn run(
    options: &Options,
    inputs: &[Result<Submission, Unusable>],
    scratch: &Scratch,
    progress: &mut dyn Progress<SubmissionReport>,
) -> Result<GradeReport, Error> {
    let tests = suite::tests();
    let mut reports: Vec<Option<SubmissionReport>> = vec![None; inputs.len()];
    // Which input each implementation of the run is.
    let mut input_of: Vec<usize> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        match input {
            Ok(_) => input_of.push(i),
            Err(unusable) => {
                let report = unusable_report(unusable, &tests, &options.weights);
                progress.own(&report);
                reports[i] = Some(report);
            }
        }
    }
    let ready: Vec<&Submission> = inputs.iter().filter_map(|i| i.as_ref().ok()).collect();
    if !ready.is_empty() {
        let implementations: Vec<Implementation> = ready
            .iter()
            .map(|s| Implementation {
                shown_path: shown(&s.file),
                source: s.source.clone(),
            })
            .collect();
        let request = Request {
            policy: options.policy.clone(),
            suite: SuiteFiles::builtin(),
            scenarios: (0..implementations.len())
                .map(|i| Scenario {
                    kind: ScenarioKind::Tests,
                    implementation: i,
                    tests: Tests::Only(tests.clone()),
                })
                .collect(),
            implementations,
            jobs: options.jobs,
        };
        let run = engine::run(scratch, &request, &mut |event| {
            if let Event::Finished { scenario, result } = &event {
                let i = input_of[*scenario];
                let report = submission_report(options, ready[*scenario], result, &tests);
                progress.own(&report);
                reports[i] = Some(report);
            }
            progress.engine(&event);
        })?;
        for (scenario, result) in run.results.iter().enumerate() {
            let i = input_of[scenario];
            if reports[i].is_none() {
                reports[i] = Some(submission_report(options, ready[scenario], result, &tests));
            }
        }
    }
    let reports: Vec<SubmissionReport> = reports
        .into_iter()
        .map(|r| r.expect("every input has a report"))
        .collect();
    Ok(GradeReport {
        schema: 1,
        fencelab_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: suite::digest(),
        min_score: options.min_score,
        test_limit_secs: options.policy.limit_after(None).as_secs_f64(),
        build_limit_secs: options.policy.build_limit.unwrap_or_default().as_secs_f64(),
        budget_secs: options.policy.budget.map(|b| b.as_secs_f64()),
        shard: options.shard,
        weights: options.weights.by_slug(),
        correct_implementations: Vec::new(),
        freedoms: Default::default(),
        exit_code: exit_code_of(&reports),
        submissions: reports,
    })
}

#[cfg(test)]
impl GradeReport {
    /// A report of `submissions` with the default limits, as the reports'
    /// unit tests build one.
    pub(crate) fn of_test(submissions: Vec<SubmissionReport>, min_score: f64) -> GradeReport {
        GradeReport {
            schema: 1,
            fencelab_version: "0.1.0".into(),
            suite: "sha256:x".into(),
            min_score,
            test_limit_secs: 10.0,
            build_limit_secs: 600.0,
            budget_secs: Some(15.0),
            shard: None,
            weights: equal_weights(),
            correct_implementations: Vec::new(),
            freedoms: Default::default(),
            exit_code: exit_code_of(&submissions),
            submissions,
        }
    }
}

/// How a grading of `submissions` ends: 2 when none could be graded at all,
/// else 3 when one does not compile or cannot be graded, else 1 when one is
/// below the gate, else 0.
pub(crate) fn exit_code_of(submissions: &[SubmissionReport]) -> ExitCode {
    if !submissions.is_empty() && submissions.iter().all(|r| r.unusable.is_some()) {
        ExitCode::UnusableInput
    } else if submissions
        .iter()
        .any(|r| r.compile_errors.is_some() || r.unusable.is_some())
    {
        ExitCode::NotJudgeable
    } else if submissions.iter().any(|r| !r.passed_gate) {
        ExitCode::Failed
    } else {
        ExitCode::Success
    }
}

/// The report of a submission that could not be graded: 0 in every step.
fn unusable_report(
    unusable: &Unusable,
    tests: &[suite::SuiteTest],
    weights: &Weights,
) -> SubmissionReport {
    SubmissionReport {
        name: unusable.name.clone(),
        file: shown(&unusable.file),
        score: 0.0,
        passed_gate: false,
        compile_errors: None,
        unusable: Some(unusable.reason.clone()),
        invalid_tests: None,
        steps: zero_steps(tests, weights),
        tests: Vec::new(),
        learner_tests: Vec::new(),
    }
}

/// Every step with nothing passed.
fn zero_steps(tests: &[suite::SuiteTest], weights: &Weights) -> Vec<StepScore> {
    SLUGS
        .iter()
        .enumerate()
        .map(|(i, slug)| StepScore {
            step: i as u32 + 1,
            slug,
            passed: 0,
            total: tests.iter().filter(|t| t.step == i as u32 + 1).count(),
            score: 0.0,
            weight: weights.of(i as u32 + 1),
        })
        .collect()
}

/// A graded submission's report from its scenario's result.
fn submission_report(
    options: &Options,
    submission: &Submission,
    result: &ScenarioResult,
    tests: &[suite::SuiteTest],
) -> SubmissionReport {
    let compile_errors = match result {
        ScenarioResult::Unviable { errors } => Some(strip_grader_paths(errors)),
        _ => None,
    };
    let results: BTreeMap<&str, (&TestOutcome, f64)> = result
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
            weight: options.weights.of(tally.step),
        })
        .collect();
    // The gate compares the exact score; reports show it to 1/100.
    let exact = if compile_errors.is_some() {
        0.0
    } else {
        points::weighted(&steps) * 100.0
    };
    SubmissionReport {
        name: submission.name.clone(),
        file: shown(&submission.file),
        score: (exact * 100.0).round() / 100.0,
        passed_gate: compile_errors.is_none() && exact >= options.min_score,
        compile_errors,
        unusable: None,
        invalid_tests: None,
        steps,
        tests: graded,
        learner_tests: Vec::new(),
    }
}

fn shown(file: &Path) -> String {
    crate::output::paths::shown_path(file, &std::env::current_dir().unwrap_or_default())
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
