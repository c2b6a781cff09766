//! `fencelab verify`: proves that the suite kills every mutant as its file
//! declares, and shows which tests kill which mutant.
//!
//! One build (the reference and every mutant in one server), then the baseline:
//! the whole suite on the unmutated implementation, twice; a test that disagrees
//! with itself is flaky and not trusted, a test that fails both times means the
//! baseline failed and nothing else is reported. Then every test runs against
//! every mutant (no fail-fast), so the report has each mutant's full kill set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::builder::Implementation;
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::engine::policy::{LIMIT_FACTOR, LIMIT_FLOOR, Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Event, Request, Scenario, ScenarioKind, ScenarioResult};
use crate::error::Error;
use crate::lab::mutant::{self, Mutant};
use crate::lab::reference::{DEFAULT_FILE, REFERENCE};
use crate::lab::suite;

/// What to verify, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The directory of mutant files (`None`: the mutants built into fencelab).
    pub mutants: Option<PathBuf>,
    /// The implementation the mutants apply to (`None`: the reference built
    /// into fencelab).
    pub implementation: Option<PathBuf>,
    /// The directory paths in mutant files are relative to.
    pub root: PathBuf,
    /// Mutant ids to run (substrings, or whole ids with `exact`); all if empty.
    pub filters: Vec<String>,
    pub exact: bool,
    /// A fixed time limit per test instead of one from the baseline.
    pub timeout: Option<Duration>,
    pub build_timeout: Option<Duration>,
    pub jobs: usize,
}

/// The whole result, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The version of this schema (see README.md, "verify --json").
    pub schema: u32,
    pub implementation: String,
    pub mutants_dir: String,
    pub build_secs: f64,
    pub baseline: Baseline,
    pub limit: LimitInfo,
    pub mutants: Vec<MutantReport>,
    /// Whether only some of the directory's mutants were run.
    pub filtered: bool,
    /// With `--predictions`: each prediction beside what happened, and the score.
    pub predictions: Option<crate::commands::predict::Scorecard>,
    pub summary: Summary,
}

/// The suite against the unmutated implementation, run twice.
#[derive(Debug, Serialize)]
pub struct Baseline {
    /// Whether every test passed at least once (flaky tests aside, the baseline
    /// is fine).
    pub passed: bool,
    /// When the implementation itself does not compile: the compiler's messages.
    pub compile_errors: Option<String>,
    pub tests: Vec<BaselineTest>,
    /// Tests that passed once and failed once: not trusted for kills.
    pub flaky: Vec<String>,
    pub secs: f64,
}

#[derive(Debug, Serialize)]
pub struct BaselineTest {
    pub test: String,
    pub step: u32,
    /// The outcome of each run.
    pub runs: Vec<TestOutcome>,
    pub secs: Vec<f64>,
    pub flaky: bool,
}

#[derive(Debug, Serialize)]
pub struct LimitInfo {
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
    /// The mutant file.
    pub path: String,
    pub outcome: MutantOutcome,
    /// Every declared killer failed and every declared survivor passed.
    pub as_declared: bool,
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
    /// The time its tests took, added up.
    pub secs: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kill {
    pub test: String,
    /// `failed`, `crashed` or `timeout`.
    pub outcome: &'static str,
    pub message: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub mutants: usize,
    pub as_declared: usize,
    pub not_as_declared: usize,
    /// How many mutants ended with each outcome.
    pub outcomes: BTreeMap<&'static str, usize>,
    pub exit_code: i32,
}

/// Exit codes of `verify`.
pub mod exit {
    /// Every mutant was killed as declared.
    pub const ALL_AS_DECLARED: i32 = 0;
    /// Some mutant was not (survived, stale, unviable, killed by other tests...).
    pub const NOT_AS_DECLARED: i32 = 1;
    /// The input could not be used (missing or malformed files, bad arguments).
    pub const UNUSABLE_INPUT: i32 = 2;
    /// The unmutated implementation fails the suite or does not compile.
    pub const BASELINE_FAILED: i32 = 3;
}

/// What the front end is told while verification runs.
pub trait Progress {
    fn started(&mut self, mutants: usize, implementation: &str, mutants_dir: &str);
    fn built(&mut self, implementations: usize, secs: f64);
    fn trial_done(&mut self, done: usize, total: usize);
    fn baseline(&mut self, baseline: &Baseline);
    fn mutant(&mut self, report: &MutantReport);
}

/// Loads the mutants selected by `options`.
pub fn load(options: &Options) -> Result<Vec<Mutant>, Error> {
    let all = match &options.mutants {
        Some(dir) => mutant::load_dir(dir, &suite::test_names())?,
        None => mutant::builtin(),
    };
    if options.filters.is_empty() {
        return Ok(all);
    }
    let selected: Vec<Mutant> = all
        .into_iter()
        .filter(|m| {
            options.filters.iter().any(|f| {
                if options.exact {
                    &m.id == f
                } else {
                    m.id.contains(f.as_str())
                }
            })
        })
        .collect();
    if selected.is_empty() {
        return Err(Error::input(format!(
            "no mutant in {} matches {}",
            options
                .mutants
                .as_ref()
                .map_or("fencelab's built-in mutants".into(), |d| d
                    .display()
                    .to_string()),
            options.filters.join(", ")
        ))
        .with_next("run `fencelab verify` without a filter to see every mutant's id"));
    }
    Ok(selected)
}

/// Runs the verification of `mutants` (as `load` selected them; none runs the
/// baseline alone).
pub fn run(
    options: &Options,
    mutants: &[Mutant],
    scratch: &Scratch,
    progress: &mut dyn Progress,
) -> Result<Report, Error> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let (source, shown) = match &options.implementation {
        Some(path) => {
            let source = std::fs::read_to_string(path).map_err(|e| {
                Error::io("read the implementation", path, e)
                    .with_next("give the implementation's file with --impl FILE")
            })?;
            let shown = shown_path(path, &options.root);
            if options.mutants.is_some() {
                check_files(mutants, path, &options.root, &shown)?;
            }
            (source, shown)
        }
        None => (REFERENCE.to_string(), DEFAULT_FILE.to_string()),
    };
    let mutants_dir = match &options.mutants {
        Some(dir) => shown_path(dir, &cwd),
        None => "fencelab's built-in mutants".to_string(),
    };
    progress.started(mutants.len(), &shown, &mutants_dir);

    // The reference first, its baseline scenario 0; then each mutant that
    // applies, a scenario each.
    let tests = suite::tests();
    let policy = Policy::of(Trust::Instructor).with_limits(options.timeout, options.build_timeout);
    let mut request = Request {
        policy: policy.clone(),
        implementations: vec![Implementation {
            shown_path: shown.clone(),
            source: source.clone(),
        }],
        scenarios: vec![Scenario {
            kind: ScenarioKind::Baseline,
            implementation: 0,
            tests: tests.clone(),
        }],
        jobs: options.jobs,
    };
    // Per mutant: its scenario, or why it has none; and its diff.
    let mut scenario_of: Vec<Result<usize, String>> = Vec::new();
    let mut diffs: Vec<String> = Vec::new();
    for m in mutants {
        match m.apply(&source) {
            Ok(mutated) => {
                diffs.push(crate::output::diff::patch(
                    &source, &mutated, &shown, &shown,
                ));
                request.implementations.push(Implementation {
                    shown_path: shown.clone(),
                    source: mutated,
                });
                scenario_of.push(Ok(request.scenarios.len()));
                request.scenarios.push(Scenario {
                    kind: ScenarioKind::Tests,
                    implementation: request.implementations.len() - 1,
                    tests: tests.clone(),
                });
            }
            Err(stale) => {
                diffs.push(String::new());
                scenario_of.push(Err(stale.describe(Path::new(&shown))));
            }
        }
    }
    let mutant_of = |scenario: usize| scenario_of.iter().position(|s| *s == Ok(scenario));
    let mut baseline = Baseline {
        passed: false,
        compile_errors: None,
        tests: Vec::new(),
        flaky: Vec::new(),
        secs: 0.0,
    };
    let mut reports: Vec<Option<MutantReport>> = vec![None; mutants.len()];
    let mut baseline_done = false;
    let started = Instant::now();
    let mut flaky: BTreeSet<String> = BTreeSet::new();
    let run = engine::run(scratch, &request, &mut |event| match event {
        Event::Built {
            implementations,
            secs,
        } => progress.built(implementations, secs),
        Event::Trial { done, total } => progress.trial_done(done, total),
        Event::Finished {
            scenario: 0,
            result,
        } => {
            baseline = baseline_of(result, started.elapsed());
            flaky = baseline.flaky.iter().cloned().collect();
            progress.baseline(&baseline);
            baseline_done = true;
            if !baseline.passed {
                return;
            }
            // Stale and unviable mutants are known before any of their tests run.
            for (m, mutant) in mutants.iter().enumerate() {
                let early = match &scenario_of[m] {
                    Err(stale) => Some(finish(
                        mutant,
                        MutantOutcome::Stale,
                        &BTreeMap::new(),
                        &flaky,
                        String::new(),
                        Some(stale.clone()),
                    )),
                    Ok(_) => reports[m].take(),
                };
                if let Some(report) = early {
                    progress.mutant(&report);
                    reports[m] = Some(report);
                }
            }
        }
        Event::Finished { scenario, result } => {
            let Some(m) = mutant_of(scenario) else {
                return;
            };
            let report = match result {
                ScenarioResult::Unviable { errors } => finish(
                    &mutants[m],
                    MutantOutcome::Unviable,
                    &BTreeMap::new(),
                    &flaky,
                    std::mem::take(&mut diffs[m]),
                    Some(errors.clone()),
                ),
                ScenarioResult::NotRun => return,
                ScenarioResult::Ran { tests } => {
                    let outcomes: BTreeMap<String, TestOutcome> = tests
                        .iter()
                        .map(|t| (t.test.name.clone(), t.outcome().clone()))
                        .collect();
                    let outcome = MutantOutcome::from_tests(
                        outcomes
                            .iter()
                            .filter(|(t, _)| !flaky.contains(t.as_str()))
                            .map(|(_, o)| o),
                    );
                    let mut report = finish(
                        &mutants[m],
                        outcome,
                        &outcomes,
                        &flaky,
                        std::mem::take(&mut diffs[m]),
                        None,
                    );
                    report.secs = tests.iter().map(|t| t.runs[0].duration.as_secs_f64()).sum();
                    report
                }
            };
            // Unviable mutants are known at once; they are shown after the baseline.
            if baseline_done {
                progress.mutant(&report);
            }
            reports[m] = Some(report);
        }
    })?;
    let mut report = Report {
        schema: 1,
        implementation: shown.clone(),
        mutants_dir,
        build_secs: run.build_secs,
        baseline,
        limit: LimitInfo {
            fixed_secs: options.timeout.map(|t| t.as_secs_f64()),
            floor_secs: LIMIT_FLOOR.as_secs_f64(),
            factor: LIMIT_FACTOR,
        },
        mutants: Vec::new(),
        filtered: !options.filters.is_empty(),
        predictions: None,
        summary: Summary::default(),
    };
    if let ScenarioResult::Unviable { errors } = &run.results[0] {
        report.baseline.compile_errors = Some(errors.clone());
        progress.baseline(&report.baseline);
    }
    if !report.baseline.passed {
        report.summary.exit_code = exit::BASELINE_FAILED;
        return Ok(report);
    }
    report.mutants = reports
        .into_iter()
        .map(|r| r.expect("every mutant has a report"))
        .collect();
    report.summary = summarize(&report.mutants);
    Ok(report)
}

/// The baseline's report from its scenario's result.
fn baseline_of(result: &ScenarioResult, took: Duration) -> Baseline {
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

/// Checks that every mutant was written for the implementation under test.
fn check_files(
    mutants: &[Mutant],
    implementation: &Path,
    root: &Path,
    shown: &str,
) -> Result<(), Error> {
    let target = normalize(implementation);
    for m in mutants {
        if normalize(&root.join(&m.file)) != target {
            return Err(Error::input(format!(
                "{}: the mutant applies to {} but the implementation under test is {shown}",
                m.path.display(),
                m.file.display()
            ))
            .with_next(format!(
                "set file = \"{shown}\" in the mutant, or run with --impl {}",
                m.file.display()
            )));
        }
    }
    Ok(())
}

fn normalize(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// `path` relative to `root` when it is inside it, as written otherwise.
pub fn shown_path(path: &Path, root: &Path) -> String {
    let full = normalize(path);
    match full.strip_prefix(normalize(root)) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// A mutant's report from its tests' outcomes.
fn finish(
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
        .map(|(test, outcome)| Kill {
            test: test.clone(),
            outcome: outcome.label(),
            message: outcome.message().unwrap_or_default(),
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
    let as_declared = ran
        && missing_killers.is_empty()
        && failed_survivors.is_empty()
        && matches!(
            outcome,
            MutantOutcome::Killed | MutantOutcome::Crashed | MutantOutcome::Timeout
        );
    MutantReport {
        id: mutant.id.clone(),
        step: mutant.step,
        title: mutant.title.clone(),
        path: shown_path(&mutant.path, &std::env::current_dir().unwrap_or_default()),
        outcome,
        as_declared,
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

fn summarize(mutants: &[MutantReport]) -> Summary {
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
        exit::ALL_AS_DECLARED
    } else {
        exit::NOT_AS_DECLARED
    };
    summary
}
