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

use crate::engine::builder::{self, Hosting, Implementation};
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::engine::runner::{Runner, Trial, TrialResult};
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::lab::mutant::{self, Mutant};
use crate::lab::suite;

/// The least time a test gets under a mutant, and how many times its slower
/// baseline run it may take.
pub const LIMIT_FLOOR: Duration = Duration::from_secs(10);
pub const LIMIT_FACTOR: u32 = 5;
/// The time a test gets in the baseline (or `--timeout`, if that is longer:
/// a limit meant for mutants must not make the reference's own tests fail).
const BASELINE_LIMIT: Duration = Duration::from_secs(60);

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
        None => (
            crate::commands::new::REFERENCE.to_string(),
            "src/lease.rs".to_string(),
        ),
    };
    let mutants_dir = match &options.mutants {
        Some(dir) => shown_path(dir, &cwd),
        None => "fencelab's built-in mutants".to_string(),
    };
    progress.started(mutants.len(), &shown, &mutants_dir);

    // The reference first, then each mutant that applies.
    let mut implementations = vec![Implementation {
        shown_path: shown.clone(),
        source: source.clone(),
    }];
    let mut applied: Vec<Result<(usize, String), String>> = Vec::new();
    for m in mutants {
        match m.apply(&source) {
            Ok(mutated) => {
                applied.push(Ok((implementations.len(), mutated.clone())));
                implementations.push(Implementation {
                    shown_path: shown.clone(),
                    source: mutated,
                });
            }
            Err(stale) => applied.push(Err(stale.describe(Path::new(&shown)))),
        }
    }
    let build = builder::build(
        scratch,
        &implementations,
        options.build_timeout,
        builder::Servers::Shared,
    )?;
    progress.built(implementations.len(), build.duration.as_secs_f64());
    let limit_info = LimitInfo {
        fixed_secs: options.timeout.map(|t| t.as_secs_f64()),
        floor_secs: LIMIT_FLOOR.as_secs_f64(),
        factor: LIMIT_FACTOR,
    };
    let tests = suite::tests();
    let mut report = Report {
        schema: 1,
        implementation: shown.clone(),
        mutants_dir,
        build_secs: build.duration.as_secs_f64(),
        baseline: Baseline {
            passed: false,
            compile_errors: None,
            tests: Vec::new(),
            flaky: Vec::new(),
            secs: 0.0,
        },
        limit: limit_info,
        mutants: Vec::new(),
        filtered: !options.filters.is_empty(),
        predictions: None,
        summary: Summary::default(),
    };
    let (reference_key, reference_server) = match &build.hosting[0] {
        Hosting::Hosted { key, server } => (key.clone(), server.clone()),
        Hosting::Unviable { errors } => {
            report.baseline.compile_errors = Some(errors.clone());
            progress.baseline(&report.baseline);
            report.summary.exit_code = exit::BASELINE_FAILED;
            return Ok(report);
        }
    };
    let runner = Runner {
        judge: build.judge.clone(),
        jobs: options.jobs,
        output_cap: 64 * 1024,
        hunt_orphans: false,
    };

    // The baseline, twice.
    let baseline_limit = options.timeout.unwrap_or_default().max(BASELINE_LIMIT);
    let trials: Vec<Trial> = (0..2)
        .flat_map(|_| tests.iter())
        .map(|t| Trial {
            server: reference_server.clone(),
            key: reference_key.clone(),
            test: t.name.clone(),
            limit: baseline_limit,
        })
        .collect();
    let start = Instant::now();
    let mut results: Vec<Option<TrialResult>> = vec![None; trials.len()];
    let total = trials.len();
    let mut done = 0;
    runner.run(&trials, |index, result| {
        results[index] = Some(result);
        done += 1;
        progress.trial_done(done, total);
    })?;
    let n = tests.len();
    for (i, test) in tests.iter().enumerate() {
        let runs: Vec<&TrialResult> = [&results[i], &results[n + i]]
            .map(|r| r.as_ref().expect("every trial ran"))
            .to_vec();
        let passes = runs.iter().filter(|r| r.outcome.passed()).count();
        report.baseline.tests.push(BaselineTest {
            test: test.name.clone(),
            step: test.step,
            runs: runs.iter().map(|r| r.outcome.clone()).collect(),
            secs: runs.iter().map(|r| r.duration.as_secs_f64()).collect(),
            flaky: passes == 1,
        });
    }
    report.baseline.flaky = report
        .baseline
        .tests
        .iter()
        .filter(|t| t.flaky)
        .map(|t| t.test.clone())
        .collect();
    report.baseline.passed = report
        .baseline
        .tests
        .iter()
        .all(|t| t.runs.iter().any(TestOutcome::passed));
    report.baseline.secs = start.elapsed().as_secs_f64();
    progress.baseline(&report.baseline);
    if !report.baseline.passed {
        report.summary.exit_code = exit::BASELINE_FAILED;
        return Ok(report);
    }

    // Every test against every viable mutant.
    let limits: BTreeMap<&str, Duration> = report
        .baseline
        .tests
        .iter()
        .map(|t| {
            let slowest = t.secs.iter().copied().fold(0.0, f64::max);
            let limit = options.timeout.unwrap_or_else(|| {
                LIMIT_FLOOR.max(Duration::from_secs_f64(slowest) * LIMIT_FACTOR)
            });
            (t.test.as_str(), limit)
        })
        .collect();
    let flaky: BTreeSet<&str> = report.baseline.flaky.iter().map(String::as_str).collect();
    let mut trials = Vec::new();
    let mut owner = Vec::new();
    let mut reports: Vec<Option<MutantReport>> = vec![None; mutants.len()];
    let mut pending = vec![0usize; mutants.len()];
    for (m, applied) in applied.iter().enumerate() {
        let mutant = &mutants[m];
        match applied {
            Err(stale) => {
                reports[m] = Some(finish(
                    mutant,
                    MutantOutcome::Stale,
                    &BTreeMap::new(),
                    &flaky,
                    String::new(),
                    Some(stale.clone()),
                ));
            }
            Ok((index, mutated)) => {
                let diff = crate::output::diff::patch(&source, mutated, &shown, &shown);
                match &build.hosting[*index] {
                    Hosting::Unviable { errors } => {
                        reports[m] = Some(finish(
                            mutant,
                            MutantOutcome::Unviable,
                            &BTreeMap::new(),
                            &flaky,
                            diff,
                            Some(errors.clone()),
                        ));
                    }
                    Hosting::Hosted { key, server } => {
                        reports[m] = Some(finish(
                            mutant,
                            MutantOutcome::Survived,
                            &BTreeMap::new(),
                            &flaky,
                            diff,
                            None,
                        ));
                        for test in &tests {
                            trials.push(Trial {
                                server: server.clone(),
                                key: key.clone(),
                                test: test.name.clone(),
                                limit: limits[test.name.as_str()],
                            });
                            owner.push(m);
                            pending[m] += 1;
                        }
                    }
                }
            }
        }
    }
    // Stale and unviable mutants are known before any test runs.
    for report in reports.iter().flatten() {
        if matches!(
            report.outcome,
            MutantOutcome::Stale | MutantOutcome::Unviable
        ) {
            progress.mutant(report);
        }
    }
    let mut outcomes: Vec<BTreeMap<String, TestOutcome>> = vec![BTreeMap::new(); mutants.len()];
    let mut secs = vec![0.0f64; mutants.len()];
    let total = trials.len();
    let mut done = 0;
    runner.run(&trials, |index, result| {
        let m = owner[index];
        outcomes[m].insert(trials[index].test.clone(), result.outcome);
        secs[m] += result.duration.as_secs_f64();
        pending[m] -= 1;
        done += 1;
        progress.trial_done(done, total);
        if pending[m] == 0 {
            let diff = reports[m].take().map(|r| r.diff).unwrap_or_default();
            let outcome = MutantOutcome::from_tests(
                outcomes[m]
                    .iter()
                    .filter(|(t, _)| !flaky.contains(t.as_str()))
                    .map(|(_, o)| o),
            );
            let mut finished = finish(&mutants[m], outcome, &outcomes[m], &flaky, diff, None);
            finished.secs = secs[m];
            progress.mutant(&finished);
            reports[m] = Some(finished);
        }
    })?;
    report.mutants = reports
        .into_iter()
        .map(|r| r.expect("every mutant has a report"))
        .collect();
    report.summary = summarize(&report.mutants);
    Ok(report)
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
    flaky: &BTreeSet<&str>,
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
