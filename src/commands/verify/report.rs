//! What `verify` found, as `--json` writes it (schema in README.md), and how a
//! mutant's report is made from its tests' outcomes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use crate::engine::ScenarioResult;
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::exit::ExitCode;
use crate::lab::lang::Text;
use crate::lab::mutant::Mutant;
use crate::lab::observation::Observation;
use crate::output::paths::shown_path;

/// The whole result, as `--json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The version of this schema (see README.md, "verify --json").
    pub schema: u32,
    /// As the terminal says it: a path, or "the built-in reference".
    pub implementation: String,
    /// The implementation's path, for the reports that place lines in a
    /// file (Stryker's, GitHub's annotations).
    #[serde(skip)]
    pub file: String,
    pub mutants_dir: String,
    pub build_secs: f64,
    pub baseline: Baseline,
    pub(crate) limit: LimitInfo,
    pub mutants: Vec<MutantReport>,
    /// Whether only some of the directory's mutants were run.
    pub filtered: bool,
    /// The shipped wheats, run through the suite in the same run as the
    /// mutants (`None` when only some mutants ran, or the implementation is
    /// not the built-in reference, or the baseline failed).
    pub wheats: Option<WheatsChecked>,
    /// With `--predictions`: each prediction beside what happened, and the score.
    pub predictions: Option<super::predictions::Scorecard>,
    pub summary: Summary,
    /// The whole run's time (build, baseline and mutants), in seconds.
    pub secs: f64,
    /// The implementation's text, for reports that show it (`--stryker`,
    /// `--html`); not in the JSON, which names the file.
    #[serde(skip)]
    pub source: String,
    /// The command that runs what ran again, without its filters: every
    /// option that chose the implementation, the mutants and the limits.
    #[serde(skip)]
    pub rerun: String,
}

/// The suite against the unmutated implementation, run twice.
#[derive(Debug, Clone, Serialize)]
pub struct Baseline {
    /// Whether every test passed at least once (flaky tests aside, the baseline
    /// is fine).
    pub passed: bool,
    /// When the implementation itself does not compile: the compiler's messages.
    pub compile_errors: Option<String>,
    pub tests: Vec<BaselineTest>,
    /// Tests that passed once and failed once: not trusted for kills.
    pub flaky: Vec<String>,
    /// Its own wall time: from the end of the build to its last trial (the
    /// build is `build_secs`).
    pub secs: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BaselineTest {
    pub test: String,
    pub step: u32,
    /// The outcome of each run.
    pub runs: Vec<TestOutcome>,
    pub secs: Vec<f64>,
    pub flaky: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct LimitInfo {
    /// The fixed limit given with `--timeout`, if any.
    pub fixed_secs: Option<f64>,
    /// Otherwise each test's limit is max(floor, factor x its slower baseline run).
    pub floor_secs: f64,
    pub factor: u32,
}

/// One mutant's result.
#[derive(Debug, Clone, Serialize)]
pub struct MutantReport {
    pub id: String,
    pub step: u32,
    pub title: String,
    /// The title in both languages, for the screen.
    #[serde(skip)]
    pub titles: Text,
    /// The mutant file.
    pub path: String,
    pub outcome: MutantOutcome,
    /// Every declared killer failed and every declared survivor passed (for
    /// an equivalent mutant: every test passed).
    pub as_declared: bool,
    /// Why no test can tell it from the implementation, when its file
    /// declares it equivalent (expected to survive).
    pub equivalent: Option<String>,
    /// The tests that failed under the mutant, with why.
    pub killed_by: Vec<Kill>,
    pub killers: Vec<String>,
    pub survivors: Vec<String>,
    /// Declared killers that did not fail (or are flaky).
    pub missing_killers: Vec<String>,
    /// Declared survivors that did not pass.
    pub failed_survivors: Vec<String>,
    /// The mutation as a unified diff of the implementation (`patch` reads it).
    pub diff: String,
    /// For an unviable mutant the compiler's messages; for a stale one where
    /// its `find` text went.
    pub detail: Option<String>,
    /// Every test's outcome (flaky tests included, marked in the baseline).
    pub tests: BTreeMap<String, TestOutcome>,
    /// The time its tests took, added up (they run side by side with other
    /// mutants' tests, so this is more than the wall time it took).
    pub secs: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kill {
    pub test: String,
    /// `failed`, `crashed` or `timeout`.
    pub outcome: &'static str,
    pub message: String,
    /// The message with fencelab's sentences still marked (`bridge::said`),
    /// for a screen to word in its language.
    #[serde(skip)]
    pub marked: String,
    /// What the test observed, when its message is an observation.
    pub observation: Option<KillObservation>,
}

/// The wheats (correct implementations), each of which must pass the whole
/// suite as the reference does.
#[derive(Debug, Clone, Serialize)]
pub struct WheatsChecked {
    pub checked: usize,
    pub passed: usize,
    /// Each wheat that did not pass, and why.
    pub failed: Vec<WheatFailure>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WheatFailure {
    pub id: String,
    /// The wheat's file.
    pub path: String,
    /// Its failing tests.
    pub tests: Vec<String>,
    /// The compiler's messages or the failing tests' first lines.
    pub detail: String,
}

/// A failing test's observation, as its message has it.
#[derive(Debug, Clone, Serialize)]
pub struct KillObservation {
    pub what: String,
    pub expected: String,
    pub actual: String,
    /// Where in the suite (`tests/behaviour/step4.rs:106:5`).
    pub location: Option<String>,
}

impl KillObservation {
    fn of(message: &str) -> Option<KillObservation> {
        Observation::parse(message).map(|o| KillObservation {
            what: o.what,
            expected: o.expected,
            actual: o.actual,
            location: o.location,
        })
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub mutants: usize,
    pub as_declared: usize,
    pub not_as_declared: usize,
    /// How many mutants ended with each outcome.
    pub outcomes: BTreeMap<&'static str, usize>,
    pub exit_code: ExitCode,
}

/// The baseline's report from its scenario's result.
pub(super) fn baseline_of(result: &ScenarioResult, took: Duration) -> Baseline {
    let tests: Vec<BaselineTest> = result
        .tests()
        .unwrap_or_default()
        .iter()
        .map(|t| BaselineTest {
            test: t.test.name.clone(),
            step: t.test.step,
            runs: t.runs.iter().map(|r| r.outcome.clone()).collect(),
            secs: t.runs.iter().map(|r| r.duration.as_secs_f64()).collect(),
            flaky: t.flaky(),
        })
        .collect();
    Baseline {
        passed: result.passed_at_least_once(),
        compile_errors: None,
        flaky: tests
            .iter()
            .filter(|t| t.flaky)
            .map(|t| t.test.clone())
            .collect(),
        tests,
        secs: took.as_secs_f64(),
    }
}

/// A mutant's report from its tests' outcomes.
pub(super) fn finish(
    mutant: &Mutant,
    outcome: MutantOutcome,
    tests: &BTreeMap<String, TestOutcome>,
    flaky: &BTreeSet<String>,
    diff: String,
    detail: Option<String>,
) -> MutantReport {
    let killed_by: Vec<Kill> = tests
        .iter()
        .filter(|(test, outcome)| !outcome.passed() && !flaky.contains(test.as_str()))
        .map(|(test, outcome)| {
            let message = outcome.message().unwrap_or_default();
            Kill {
                test: test.clone(),
                outcome: outcome.label(),
                observation: KillObservation::of(&message),
                message,
                marked: outcome.marked_message().unwrap_or_default(),
            }
        })
        .collect();
    let ran = !tests.is_empty();
    let missing_killers: Vec<String> = mutant
        .killers
        .iter()
        .filter(|k| {
            !ran || flaky.contains(k.as_str()) || tests.get(*k).is_none_or(TestOutcome::passed)
        })
        .cloned()
        .collect();
    let failed_survivors: Vec<String> = mutant
        .survivors
        .iter()
        .filter(|s| ran && tests.get(*s).is_some_and(|o| !o.passed()))
        .cloned()
        .collect();
    let as_declared = match mutant.equivalent {
        Some(_) => ran && outcome == MutantOutcome::Survived,
        None => {
            ran && missing_killers.is_empty()
                && failed_survivors.is_empty()
                && matches!(
                    outcome,
                    MutantOutcome::Killed | MutantOutcome::Crashed | MutantOutcome::Timeout
                )
        }
    };
    MutantReport {
        id: mutant.id.clone(),
        step: mutant.step,
        title: mutant.title.clone(),
        titles: mutant.titles.clone(),
        path: shown_path(&mutant.path, &std::env::current_dir().unwrap_or_default()),
        outcome,
        as_declared,
        equivalent: mutant.equivalent.clone(),
        killed_by,
        killers: mutant.killers.clone(),
        survivors: mutant.survivors.clone(),
        missing_killers,
        failed_survivors,
        diff,
        detail,
        tests: tests.clone(),
        secs: 0.0,
    }
}

pub(super) fn summarize(mutants: &[MutantReport]) -> Summary {
    let mut summary = Summary {
        mutants: mutants.len(),
        ..Summary::default()
    };
    for m in mutants {
        *summary.outcomes.entry(m.outcome.label()).or_default() += 1;
        if m.as_declared {
            summary.as_declared += 1;
        } else {
            summary.not_as_declared += 1;
        }
    }
    summary.exit_code = if summary.not_as_declared == 0 {
        ExitCode::Success
    } else {
        ExitCode::Failed
    };
    summary
}
