//! `fencelab verify`: proves that the suite kills every mutant as its file
//! declares, and shows which tests kill which mutant.
//!
//! One build (the reference and every mutant in one server), then the baseline:
//! the whole suite on the unmutated implementation, twice; a test that disagrees
//! with itself is flaky and not trusted, a test that fails both times means the
//! baseline failed and nothing else is reported. Then every test runs against
//! every mutant (no fail-fast), so the report has each mutant's full kill set.

pub mod cli;
mod details;
pub mod github;
pub mod html;
mod matrix;
pub mod predictions;
mod render;
mod render_predictions;
mod report;
pub mod stryker;
mod wheats;
mod words;

pub use words::{BUILTIN_MUTANTS, BUILTIN_REFERENCE};

use crate::output::paths::normalize;
use crate::output::paths::shown_path;
pub use report::{
    Baseline, BaselineTest, Kill, KillObservation, LimitInfo, MutantReport, Report, Summary,
    WheatFailure, WheatsChecked,
};
use report::{baseline_of, finish, summarize};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::engine::builder::Implementation;
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::engine::policy::{LIMIT_FACTOR, LIMIT_FLOOR, Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Event, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::mutant::{self, Mutant};
use crate::lab::reference::{DEFAULT_FILE, REFERENCE};
use crate::lab::suite;
use crate::lab::suite::SuiteFiles;

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
    /// The Python edition: without `mutants` and `implementation`, the
    /// Python mutants and reference built into fencelab.
    pub python: bool,
}

/// What the front end is told while verification runs.
pub trait Progress {
    /// `implementation` is its shown path, or [`BUILTIN_REFERENCE`].
    fn started(&mut self, mutants: usize, implementation: &str, mutants_dir: &str);
    /// The build starts; `detail` says what cargo compiles as it goes.
    fn building(&mut self, _implementations: usize, _detail: &crate::engine::cargo::Detail) {}
    fn built(&mut self, implementations: usize, secs: f64);
    fn trial_done(&mut self, done: usize, total: usize);
    fn baseline(&mut self, baseline: &Baseline);
    fn mutant(&mut self, report: &MutantReport);
}

/// Loads the mutants selected by `options`.
pub fn load(options: &Options) -> Result<Vec<Mutant>, Error> {
    let all = match &options.mutants {
        Some(dir) => mutant::load_dir(dir, &suite::test_names())?,
        None if options.python => crate::lab::python::mutants(),
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
                .map_or(BUILTIN_MUTANTS.into(), |d| d.display().to_string()),
            options.filters.join(", ")
        ))
        .with_next("`fencelab verify --list` lists every mutant's id (it builds nothing)"));
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
        None if options.python => (
            crate::lab::python::REFERENCE.to_string(),
            crate::lab::python::FILE.to_string(),
        ),
        None => (REFERENCE.to_string(), DEFAULT_FILE.to_string()),
    };
    let mutants_dir = match &options.mutants {
        Some(dir) => shown_path(dir, &cwd),
        None => BUILTIN_MUTANTS.to_string(),
    };
    let described = match &options.implementation {
        // The built-in Python reference is named by its file in fencelab's
        // project, which also tells the report's reader the edition.
        Some(_) => shown.clone(),
        None if options.python => shown.clone(),
        None => BUILTIN_REFERENCE.to_string(),
    };
    progress.started(mutants.len(), &described, &mutants_dir);

    // The reference first, its baseline scenario 0; then each mutant that
    // applies, a scenario each.
    let tests = suite::tests();
    let policy = Policy::of(Trust::Instructor).with_limits(options.timeout, options.build_timeout);
    let mut request = Request {
        suite: SuiteFiles::builtin(),
        policy: policy.clone(),
        implementations: vec![Implementation {
            shown_path: shown.clone(),
            source: source.clone(),
        }],
        scenarios: vec![Scenario {
            kind: ScenarioKind::Baseline,
            implementation: 0,
            tests: Tests::Only(tests.clone()),
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
                    tests: Tests::Only(tests.clone()),
                });
            }
            Err(stale) => {
                diffs.push(String::new());
                scenario_of.push(Err(stale.describe(Path::new(&shown))));
            }
        }
    }
    // The shipped wheats join the run (one build, one pool of trials), each a
    // scenario, when the whole suite runs on the reference they are written
    // against: the one built in, or fencelab's own src/lease.rs (the
    // instructor's `verify` in fencelab's project).
    let wheats = (options.filters.is_empty() && source == crate::lab::reference::REFERENCE)
        .then(crate::lab::wheat::Wheats::builtin);
    let mut wheat_scenarios: Vec<(usize, String)> = Vec::new();
    for wheat in wheats.iter().flat_map(|w| &w.wheats) {
        let code = crate::judging::content::wheat_code(wheat, &source)?;
        request.implementations.push(Implementation {
            shown_path: shown_path(&wheat.path, &cwd),
            source: code.clone(),
        });
        wheat_scenarios.push((request.scenarios.len(), code));
        request.scenarios.push(Scenario {
            kind: ScenarioKind::Tests,
            implementation: request.implementations.len() - 1,
            tests: Tests::Only(tests.clone()),
        });
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
    let mut trials_started: Option<Instant> = None;
    let mut flaky: BTreeSet<String> = BTreeSet::new();
    let run = engine::run(scratch, &request, &mut |event| match event {
        Event::Building {
            implementations,
            detail,
        } => progress.building(implementations, &detail),
        Event::Built {
            implementations,
            secs,
        } => {
            progress.built(implementations, secs);
            trials_started = Some(Instant::now());
        }
        Event::Trial { done, total } => progress.trial_done(done, total),
        Event::Finished {
            scenario: 0,
            result,
        } => {
            // The baseline's own time: from the end of the build (its trials
            // come first) to its last trial, not the run's so far.
            let took = trials_started.unwrap_or(started).elapsed();
            baseline = baseline_of(result, took);
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
        wheats: None,
        predictions: None,
        summary: Summary::default(),
        secs: 0.0,
        source: source.clone(),
    };
    if let ScenarioResult::Unviable { errors } = &run.results[0] {
        report.baseline.compile_errors = Some(errors.clone());
        progress.baseline(&report.baseline);
    }
    report.secs = started.elapsed().as_secs_f64();
    if !report.baseline.passed {
        report.summary.exit_code = ExitCode::NotJudgeable;
        return Ok(report);
    }
    report.mutants = reports
        .into_iter()
        .map(|r| r.expect("every mutant has a report"))
        .collect();
    report.summary = summarize(&report.mutants);
    if let Some(wheats) = &wheats {
        let checked = checked_wheats(&wheats.wheats, &wheat_scenarios, &run.results, scratch);
        if !checked.failed.is_empty() {
            report.summary.exit_code = report.summary.exit_code.max(ExitCode::Failed);
        }
        report.wheats = Some(checked);
    }
    Ok(report)
}

/// The wheats' results (each wheat's scenario and code, in order), each pass
/// remembered so that judging a learner's tests need not run it again.
fn checked_wheats(
    wheats: &[crate::lab::wheat::Wheat],
    scenarios: &[(usize, String)],
    results: &[ScenarioResult],
    scratch: &Scratch,
) -> WheatsChecked {
    use crate::judging::content;
    let suite = SuiteFiles::builtin();
    let mut failed = Vec::new();
    for (wheat, (scenario, code)) in wheats.iter().zip(scenarios) {
        let result = &results[*scenario];
        match content::failures(result) {
            Ok(()) => content::record_pass(scratch, &suite, code),
            Err(detail) => failed.push(WheatFailure {
                id: wheat.id.clone(),
                path: shown_path(&wheat.path, &std::env::current_dir().unwrap_or_default()),
                tests: result
                    .tests()
                    .unwrap_or_default()
                    .iter()
                    .filter(|t| !t.passed())
                    .map(|t| t.test.name.clone())
                    .collect(),
                detail,
            }),
        }
    }
    WheatsChecked {
        checked: wheats.len(),
        passed: wheats.len() - failed.len(),
        failed,
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
