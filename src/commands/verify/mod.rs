//! `fencelab verify`: proves that the suite kills every mutant as its file
//! declares, and shows which tests kill which mutant.
//!
//! One build (the reference and every mutant in one server), then the baseline:
//! the whole suite on the unmutated implementation, twice; a test that disagrees
//! with itself is flaky and not trusted, a test that fails both times means the
//! baseline failed and nothing else is reported. Then every test runs against
//! every mutant (no fail-fast), so the report has each mutant's full kill set.

pub(crate) mod cli;
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

pub use details::render_mutant_details;
pub use matrix::render_kill_matrix;
pub(crate) use render::render_mutant_list;
pub use render::{Live, render_verify_report};
pub use render_predictions::render_predictions;
pub(crate) use report::LimitInfo;
pub(crate) use words::{BUILTIN_MUTANTS, BUILTIN_REFERENCE};

use crate::output::paths::normalize;
use crate::output::paths::shown_path;
pub use report::{
    Baseline, BaselineTest, Kill, KillObservation, MutantReport, Report, Summary, WheatFailure,
    WheatsChecked,
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
use crate::output::progress::Progress;

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

/// What `verify` says of its own while it runs (its `Progress`), in order:
/// it starts, the baseline is known, then each mutant's report as soon as
/// it is known (stale and unviable ones right after the baseline).
#[derive(Debug, Clone)]
pub enum Update {
    /// `implementation` is its shown path, or [`BUILTIN_REFERENCE`].
    Started {
        mutants: usize,
        implementation: String,
        mutants_dir: String,
    },
    Baseline(Baseline),
    Mutant(Box<MutantReport>),
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
        .with_next(if options.python {
            "`fencelab verify --python --list` lists every Python mutant's id (it builds nothing)"
        } else {
            "`fencelab verify --list` lists every mutant's id (it builds nothing)"
        }));
    }
    Ok(selected)
}

/// Runs the verification of `mutants` (as `load` selected them; none runs the
/// baseline alone), in three stages: `plan` (what to build and run, and whose
/// each scenario is), one engine run, and a `Reading` of each scenario as it
/// finishes (the baseline, then each mutant's report, told to `progress` as
/// soon as it is known), which ends in the report.
pub fn run(
    options: &Options,
    mutants: &[Mutant],
    scratch: &Scratch,
    progress: &mut dyn Progress<Update>,
) -> Result<Report, Error> {
    let plan = plan(options, mutants)?;
    progress.own(&Update::Started {
        mutants: mutants.len(),
        implementation: plan.described.clone(),
        mutants_dir: plan.mutants_dir.clone(),
    });
    let mut reading = Reading::new(&plan, mutants);
    let run = engine::run(scratch, &plan.request, &mut |event| {
        progress.engine(&event);
        reading.event(&event, progress);
    })?;
    Ok(reading.report(options, &run, scratch, progress))
}

/// What a verification builds and runs, and whose each scenario is.
struct Plan {
    /// The implementation's text and its shown path.
    source: String,
    shown: String,
    /// How the start names the implementation: its path, or the built-in reference.
    described: String,
    mutants_dir: String,
    /// The reference first, its baseline scenario 0; then each mutant that
    /// applies, a scenario each; then the shipped wheats, if they run.
    request: Request,
    /// Per mutant: its scenario, or why it has none (it is stale).
    scenario_of: Vec<Result<usize, String>>,
    /// Per mutant: its diff (empty when stale).
    diffs: Vec<String>,
    /// The shipped wheats, when they run, and each one's scenario and code.
    wheats: Option<crate::lab::wheat::Wheats>,
    wheat_scenarios: Vec<(usize, String)>,
}

/// Reads the implementation and applies every mutant to it: the request of
/// the run, and whose each scenario is.
fn plan(options: &Options, mutants: &[Mutant]) -> Result<Plan, Error> {
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
    let tests = suite::tests();
    let policy = Policy::of(Trust::Instructor).with_limits(options.timeout, options.build_timeout);
    let mut request = Request {
        suite: SuiteFiles::builtin(),
        policy,
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
    Ok(Plan {
        source,
        shown,
        described,
        mutants_dir,
        request,
        scenario_of,
        diffs,
        wheats,
        wheat_scenarios,
    })
}

/// The interpretation of a run as its scenarios finish: the baseline (scenario
/// 0), then each mutant's report, each told as soon as it is known; stale and
/// unviable mutants right after the baseline, which comes first.
struct Reading<'p> {
    plan: &'p Plan,
    mutants: &'p [Mutant],
    /// Per mutant: its diff, until its report takes it.
    diffs: Vec<String>,
    baseline: Baseline,
    baseline_done: bool,
    /// The baseline's flaky tests, which decide no mutant's outcome.
    flaky: BTreeSet<String>,
    reports: Vec<Option<MutantReport>>,
    started: Instant,
    trials_started: Option<Instant>,
}

impl<'p> Reading<'p> {
    fn new(plan: &'p Plan, mutants: &'p [Mutant]) -> Reading<'p> {
        Reading {
            plan,
            mutants,
            diffs: plan.diffs.clone(),
            baseline: Baseline {
                passed: false,
                compile_errors: None,
                tests: Vec::new(),
                flaky: Vec::new(),
                secs: 0.0,
            },
            baseline_done: false,
            flaky: BTreeSet::new(),
            reports: vec![None; mutants.len()],
            started: Instant::now(),
            trials_started: None,
        }
    }

    /// Reads one of the engine's events.
    fn event(&mut self, event: &Event<'_>, progress: &mut dyn Progress<Update>) {
        match event {
            Event::Building { .. } | Event::Trial { .. } => {}
            Event::Built { .. } => self.trials_started = Some(Instant::now()),
            Event::Finished {
                scenario: 0,
                result,
            } => self.baseline(result, progress),
            Event::Finished { scenario, result } => self.scenario(*scenario, result, progress),
        }
    }

    fn baseline(&mut self, result: &ScenarioResult, progress: &mut dyn Progress<Update>) {
        // The baseline's own time: from the end of the build (its trials come
        // first) to its last trial, not the run's so far.
        let took = self.trials_started.unwrap_or(self.started).elapsed();
        self.baseline = baseline_of(result, took);
        self.flaky = self.baseline.flaky.iter().cloned().collect();
        progress.own(&Update::Baseline(self.baseline.clone()));
        self.baseline_done = true;
        if !self.baseline.passed {
            return;
        }
        // Stale and unviable mutants are known before any of their tests run.
        for (m, mutant) in self.mutants.iter().enumerate() {
            let early = match &self.plan.scenario_of[m] {
                Err(stale) => Some(finish(
                    mutant,
                    MutantOutcome::Stale,
                    &BTreeMap::new(),
                    &self.flaky,
                    String::new(),
                    Some(stale.clone()),
                )),
                Ok(_) => self.reports[m].take(),
            };
            if let Some(report) = early {
                progress.own(&Update::Mutant(Box::new(report.clone())));
                self.reports[m] = Some(report);
            }
        }
    }

    fn scenario(
        &mut self,
        scenario: usize,
        result: &ScenarioResult,
        progress: &mut dyn Progress<Update>,
    ) {
        let Some(m) = self
            .plan
            .scenario_of
            .iter()
            .position(|s| *s == Ok(scenario))
        else {
            return;
        };
        let mutant = &self.mutants[m];
        let diff = std::mem::take(&mut self.diffs[m]);
        let report = match result {
            ScenarioResult::Unviable { errors } => finish(
                mutant,
                MutantOutcome::Unviable,
                &BTreeMap::new(),
                &self.flaky,
                diff,
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
                        .filter(|(t, _)| !self.flaky.contains(t.as_str()))
                        .map(|(_, o)| o),
                );
                let mut report = finish(mutant, outcome, &outcomes, &self.flaky, diff, None);
                report.secs = tests.iter().map(|t| t.runs[0].duration.as_secs_f64()).sum();
                report
            }
        };
        // Unviable mutants are known at once; they are shown after the baseline.
        if self.baseline_done {
            progress.own(&Update::Mutant(Box::new(report.clone())));
        }
        self.reports[m] = Some(report);
    }

    /// The report, once the run is over.
    fn report(
        self,
        options: &Options,
        run: &engine::Run,
        scratch: &Scratch,
        progress: &mut dyn Progress<Update>,
    ) -> Report {
        let plan = self.plan;
        let mut report = Report {
            schema: 1,
            implementation: plan.described.clone(),
            file: plan.shown.clone(),
            mutants_dir: plan.mutants_dir.clone(),
            build_secs: run.build_secs,
            baseline: self.baseline,
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
            source: plan.source.clone(),
            rerun: format!(
                "fencelab verify{}",
                if options.python { " --python" } else { "" }
            ),
        };
        if let ScenarioResult::Unviable { errors } = &run.results[0] {
            report.baseline.compile_errors = Some(errors.clone());
            progress.own(&Update::Baseline(report.baseline.clone()));
        }
        report.secs = self.started.elapsed().as_secs_f64();
        if !report.baseline.passed {
            report.summary.exit_code = ExitCode::NotJudgeable;
            return report;
        }
        report.mutants = self
            .reports
            .into_iter()
            .map(|r| r.expect("every mutant has a report"))
            .collect();
        report.summary = summarize(&report.mutants);
        if let Some(wheats) = &plan.wheats {
            let checked =
                checked_wheats(&wheats.wheats, &plan.wheat_scenarios, &run.results, scratch);
            if !checked.failed.is_empty() {
                report.summary.exit_code = report.summary.exit_code.max(ExitCode::Failed);
            }
            report.wheats = Some(checked);
        }
        report
    }
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
