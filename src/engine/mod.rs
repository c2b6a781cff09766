//! The engine: builds implementations against the suite and runs every test
//! of every implementation in isolated processes, under one trust policy.
//! Every command is a front end over one call, [`run`].
//!
//! A run's stages, in order, each owned by one file:
//! 1. write and build the crates (`crates`, `cargo`, `builder`, `scratch`);
//! 2. ask each program who it is (`identity`);
//! 3. run the scenarios (`runner`, `process`, `outcome`);
//! 4. release what was built (`scratch::Pin`).
//!
//! What the run may trust, and how long things may take, is its `Policy`. An
//! implementation's language shows only in the builder. It hands on a
//! `builder::Host` for each viable one: a program speaking the bridge's
//! protocol, and the implementation's key in it. Everything after starts it
//! as `bridge/server.rs` defines, and knows nothing else of it.

// A second language plugs in at `builder::build`, as Python does. Its
// implementations are checked its own way instead of compiled, unviable with
// its own messages. Each becomes a `Host` whose program is that language's
// server. Its cage must also show what that server reads (an interpreter, the
// implementation's file), where a Rust server's cage shows its program alone.
pub mod builder;
pub(crate) mod cargo;
mod crates;
mod hangs;
mod identity;
pub mod outcome;
pub mod policy;
pub(crate) mod process;
// The judge is the suite, in Rust whatever the implementation's language.
// Only a learner's own Python tests have a Python judge (`python::judge`): it
// takes libtest's arguments and prints its verdicts.
pub(crate) mod python;
pub mod runner;
mod scenario;
pub mod scratch;
mod served;

pub use scenario::{Scenario, ScenarioKind, ScenarioResult, TestRuns, Tests};

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::lab::suite::{SuiteFiles, SuiteTest};
use builder::{Build, Built, Hosting, Implementation};
use policy::Policy;
use runner::{Runner, Trial, TrialResult};
use scratch::Scratch;

/// What one engine call does.
#[derive(Debug, Clone)]
pub struct Request {
    pub policy: Policy,
    /// The suite the judge is built from (fencelab's own, or a learner's tests).
    pub suite: SuiteFiles,
    pub implementations: Vec<Implementation>,
    /// What to run, in order (a baseline first, if any).
    pub scenarios: Vec<Scenario>,
    /// How many trials run at once.
    pub jobs: usize,
}

/// What the engine says while it works.
#[derive(Debug)]
pub enum Event<'a> {
    /// The build starts (`implementations` counts every one asked for).
    Building {
        implementations: usize,
        /// What cargo is compiling now, kept up to date while it builds (for a
        /// progress line).
        detail: cargo::Detail,
    },
    /// Everything is built (`implementations` counts the viable and the unviable).
    Built { implementations: usize, secs: f64 },
    /// Another trial has ended.
    Trial { done: usize, total: usize },
    /// A scenario is complete: its result is final.
    Finished {
        scenario: usize,
        result: &'a ScenarioResult,
    },
}

/// The result of a run.
#[derive(Debug)]
pub struct Run {
    pub build_secs: f64,
    /// The suite's tests, as its judge lists them (empty if it did not build).
    pub tests: Vec<SuiteTest>,
    /// When the suite itself does not compile: the compiler's messages.
    pub suite_errors: Option<String>,
    /// Per scenario, in the order given.
    pub results: Vec<ScenarioResult>,
}

/// The engine's one call: builds the request's suite and implementations,
/// runs its scenarios under its policy, and reports each scenario's result as
/// soon as it is known. Unviable implementations are reported first.
pub fn run(
    scratch: &Scratch,
    request: &Request,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Run, Error> {
    let policy = &request.policy;
    let start = Instant::now();
    let detail = cargo::Detail::default();
    on(Event::Building {
        implementations: request.implementations.len(),
        detail: detail.clone(),
    });
    let builds = match build(scratch, request, &detail)? {
        Builds::Ready(builds) => builds,
        Builds::SuiteUnviable { errors } => {
            return Ok(Run {
                build_secs: start.elapsed().as_secs_f64(),
                tests: Vec::new(),
                suite_errors: Some(errors),
                results: vec![ScenarioResult::NotRun; request.scenarios.len()],
            });
        }
    };
    let hosting: Vec<&Hosting> = builds.iter().flat_map(|b| &b.hosting).collect();
    let tests = builds
        .iter()
        .find_map(|b| b.tests.clone())
        .unwrap_or_default();
    let build_secs = start.elapsed().as_secs_f64();
    on(Event::Built {
        implementations: request.implementations.len(),
        secs: build_secs,
    });
    let mut results: Vec<Option<ScenarioResult>> = vec![None; request.scenarios.len()];
    for (i, scenario) in request.scenarios.iter().enumerate() {
        if let Hosting::Unviable { errors } = hosting[scenario.implementation] {
            results[i] = Some(ScenarioResult::Unviable {
                errors: errors.clone(),
            });
            on(Event::Finished {
                scenario: i,
                result: results[i].as_ref().expect("just set"),
            });
        }
    }
    let baseline_unviable = request.scenarios.iter().zip(&results).any(|(s, r)| {
        s.kind == ScenarioKind::Baseline && matches!(r, Some(ScenarioResult::Unviable { .. }))
    });
    let judge = builds.iter().find_map(|b| b.judge.clone());
    let (Some(judge), false) = (judge, baseline_unviable) else {
        // Nothing compiled, or the baseline did not: nothing to run.
        return Ok(finish(results, tests, build_secs));
    };
    let mut runner = Runner::new(judge, request.jobs, policy);
    runner.forking = builds.iter().find_map(|b| b.forking.clone());
    let (baseline, rest): (Vec<usize>, Vec<usize>) = (0..request.scenarios.len())
        .filter(|&i| results[i].is_none())
        .partition(|&i| request.scenarios[i].kind == ScenarioKind::Baseline);
    let mut limits = Limits::Baseline(policy.baseline_limit());
    for phase in [baseline, rest] {
        if !phase.is_empty() {
            let plan = PhasePlan::new(request, &tests, &hosting, &phase, &limits);
            run_phase(&runner, plan, &mut results, on)?;
        }
        if let Some(&b) = phase.first()
            && request.scenarios[b].kind == ScenarioKind::Baseline
        {
            let result = results[b].as_ref().expect("the baseline ran");
            if !result.passed_at_least_once() {
                for slot in results.iter_mut().filter(|r| r.is_none()) {
                    *slot = Some(ScenarioResult::NotRun);
                }
                break;
            }
            limits = Limits::After(result.tests().unwrap_or_default().to_vec());
        } else if matches!(limits, Limits::Baseline(_)) {
            limits = Limits::After(Vec::new());
        }
    }
    drop(builds);
    Ok(finish(results, tests, build_secs))
}

/// The limits of a phase's trials: the baseline's own, or each test's from its
/// baseline runs (none when there was no baseline).
enum Limits {
    Baseline(Duration),
    After(Vec<TestRuns>),
}

impl Limits {
    fn of(&self, policy: &Policy, test: &SuiteTest) -> Duration {
        match self {
            Limits::Baseline(limit) => *limit,
            Limits::After(baseline) => policy.limit_after(
                baseline
                    .iter()
                    .find(|t| t.test == *test)
                    .map(TestRuns::slowest),
            ),
        }
    }
}

fn finish(results: Vec<Option<ScenarioResult>>, tests: Vec<SuiteTest>, build_secs: f64) -> Run {
    Run {
        build_secs,
        tests,
        suite_errors: None,
        results: results
            .into_iter()
            .map(|r| r.unwrap_or(ScenarioResult::NotRun))
            .collect(),
    }
}

/// A build (and the pin that keeps it) as the run uses it.
struct Piece {
    judge: Option<std::path::PathBuf>,
    tests: Option<Vec<SuiteTest>>,
    hosting: Vec<Hosting>,
    /// What the runner forks Python servers with (`python::Forking`).
    forking: Option<python::Forking>,
    _pin: Option<scratch::Pin>,
}

impl From<Build> for Piece {
    fn from(build: Build) -> Piece {
        Piece {
            judge: Some(build.judge),
            tests: Some(build.tests),
            hosting: build.hosting,
            forking: None,
            _pin: Some(build.pin),
        }
    }
}

impl Piece {
    /// Implementations that could not be built in time.
    fn timed_out(implementations: usize, limit: Duration) -> Piece {
        Piece {
            judge: None,
            tests: None,
            hosting: vec![
                Hosting::Unviable {
                    errors: timed_out(limit),
                };
                implementations
            ],
            forking: None,
            _pin: None,
        }
    }
}

/// What the builds of a run came to, when fencelab could do its part.
enum Builds {
    /// The pieces, with one hosting per implementation between them, in order.
    Ready(Vec<Piece>),
    /// The suite itself does not compile: the compiler's messages (nothing
    /// can run).
    SuiteUnviable { errors: String },
}

/// Builds every implementation as the policy says: together, and, when that
/// runs out of time and the policy allows, each alone, so that one that makes
/// the compiler loop fails alone at the cost of its own limit (the others are
/// cached by then).
fn build(scratch: &Scratch, request: &Request, detail: &cargo::Detail) -> Result<Builds, Error> {
    let policy = &request.policy;
    // Python implementations are hosted apart (`python`), the Rust ones built
    // by cargo; the pieces are put back in the request's order at the end.
    let (python_impls, rust_impls): (Vec<usize>, Vec<usize>) = (0..request.implementations.len())
        .partition(|&i| python::is_python(&request.implementations[i]));
    // A learner's Python tests: the runner forks the servers they talk to
    // with the bridge's cdylib, built here when no run built it yet.
    if python::is_python_suite(&request.suite) && !python_impls.is_empty() {
        python::build_library(scratch, policy.servers, Some(detail));
    }
    let python = python::host(
        scratch,
        &python_impls
            .iter()
            .map(|&i| request.implementations[i].clone())
            .collect::<Vec<_>>(),
        policy.servers,
        policy.import_first,
    )?;
    if python::is_python_suite(&request.suite) {
        return build_python_suite(scratch, request, python, &rust_impls);
    }
    let rust: Vec<Implementation> = rust_impls
        .iter()
        .map(|&i| request.implementations[i].clone())
        .collect();
    Ok(match build_rust(scratch, request, &rust, detail)? {
        Builds::Ready(pieces) => Builds::Ready(merged(pieces, python, &rust_impls, &python_impls)),
        unviable => unviable,
    })
}

/// A learner's Python tests (`python::judge`) judged against Python
/// implementations (`python`, hosted already): no cargo runs.
fn build_python_suite(
    scratch: &Scratch,
    request: &Request,
    python: python::Hosted,
    rust: &[usize],
) -> Result<Builds, Error> {
    if !rust.is_empty() {
        return Err(Error::internal(
            "Python tests can only be judged against Python implementations",
        ));
    }
    Ok(match python::judge(scratch, &request.suite)? {
        python::Judge::Unviable { errors } => Builds::SuiteUnviable { errors },
        python::Judge::Ready {
            program,
            tests,
            pin,
        } => Builds::Ready(vec![
            Piece {
                judge: Some(program),
                tests: Some(tests),
                hosting: python.hosting,
                forking: python.forking,
                _pin: python.pin,
            },
            Piece {
                judge: None,
                tests: None,
                hosting: Vec::new(),
                forking: None,
                _pin: Some(pin),
            },
        ]),
    })
}

/// The Rust pieces and the Python hosting as one list of pieces whose
/// hostings, flattened, follow the request's order (`rust` and `python` are
/// the request's indices of each).
fn merged(
    mut pieces: Vec<Piece>,
    python: python::Hosted,
    rust: &[usize],
    python_at: &[usize],
) -> Vec<Piece> {
    if python_at.is_empty() {
        return pieces;
    }
    let mut all: Vec<Option<Hosting>> = vec![None; rust.len() + python_at.len()];
    let rust_hosting = pieces
        .iter_mut()
        .flat_map(|p| std::mem::take(&mut p.hosting));
    for (&i, hosting) in rust.iter().zip(rust_hosting) {
        all[i] = Some(hosting);
    }
    for (&i, hosting) in python_at.iter().zip(python.hosting) {
        all[i] = Some(hosting);
    }
    pieces.push(Piece {
        judge: None,
        tests: None,
        hosting: all
            .into_iter()
            .map(|h| h.expect("every implementation is hosted or unviable"))
            .collect(),
        forking: python.forking,
        _pin: python.pin,
    });
    pieces
}

/// Builds the Rust implementations `implementations` (see `build`).
fn build_rust(
    scratch: &Scratch,
    request: &Request,
    implementations: &[Implementation],
    detail: &cargo::Detail,
) -> Result<Builds, Error> {
    let policy = &request.policy;
    let plan = |implementations, time_limit| builder::Plan {
        suite: &request.suite,
        implementations,
        time_limit,
        servers: policy.servers,
        judge_caged: policy.judge_caged,
        detail: Some(detail),
    };
    match builder::build(scratch, &plan(implementations, policy.build_limit))? {
        Built::Done(build) => Ok(Builds::Ready(vec![build.into()])),
        Built::SuiteUnviable { errors } => Ok(Builds::SuiteUnviable { errors }),
        Built::TimedOut(limit) if policy.build_alone_on_timeout => {
            let mut pieces = Vec::new();
            for one in implementations {
                match builder::build(scratch, &plan(std::slice::from_ref(one), Some(limit)))? {
                    Built::Done(build) => pieces.push(build.into()),
                    Built::SuiteUnviable { errors } => {
                        return Ok(Builds::SuiteUnviable { errors });
                    }
                    Built::TimedOut(limit) => pieces.push(Piece::timed_out(1, limit)),
                }
            }
            Ok(Builds::Ready(pieces))
        }
        Built::TimedOut(limit) => Err(Error::environment(timed_out(limit))
            .with_next("raise the limit with --build-timeout SECS")),
    }
}

fn timed_out(limit: Duration) -> String {
    format!(
        "the build took longer than {:.0} s and was stopped",
        limit.as_secs_f64()
    )
}

/// A phase's plan: its scenarios (run on one pool of trials), what each of
/// them runs, and every trial in the order given to the runner.
struct PhasePlan {
    /// Per scenario of the phase, what its trials come to as they end.
    scenarios: Vec<Collecting>,
    trials: Vec<Trial>,
    /// Whose each trial is: (scenario of the phase, test, run).
    owners: Vec<(usize, usize, usize)>,
}

/// One scenario's runs as its trials end, until the last one makes its result.
struct Collecting {
    /// Its index in the request.
    scenario: usize,
    tests: Vec<SuiteTest>,
    /// Per test, per run.
    runs: Vec<Vec<Option<TrialResult>>>,
    /// How many trials have not ended.
    pending: usize,
}

impl Collecting {
    /// Records how run `run` of test `test` ended; returns the scenario's
    /// result once it was its last trial.
    fn record(&mut self, test: usize, run: usize, result: TrialResult) -> Option<ScenarioResult> {
        self.runs[test][run] = Some(result);
        self.pending -= 1;
        if self.pending > 0 {
            return None;
        }
        let tests = self
            .tests
            .iter()
            .zip(std::mem::take(&mut self.runs))
            .map(|(test, runs)| TestRuns {
                test: test.clone(),
                runs: runs
                    .into_iter()
                    .map(|r| r.expect("every run ended"))
                    .collect(),
            })
            .collect();
        Some(ScenarioResult::Ran { tests })
    }
}

impl PhasePlan {
    /// The plan of the scenarios `phase` (indices into the request), each
    /// test under its limit.
    fn new(
        request: &Request,
        inventory: &[SuiteTest],
        hosting: &[&Hosting],
        phase: &[usize],
        limits: &Limits,
    ) -> PhasePlan {
        let mut plan = PhasePlan {
            scenarios: Vec::new(),
            trials: Vec::new(),
            owners: Vec::new(),
        };
        for (p, &s) in phase.iter().enumerate() {
            let scenario = &request.scenarios[s];
            let tests = scenario.tests.resolve(inventory);
            let Hosting::Hosted(host) = hosting[scenario.implementation] else {
                unreachable!("unviable scenarios are finished before any phase");
            };
            let n = scenario.kind.runs();
            for run in 0..n {
                for (t, test) in tests.iter().enumerate() {
                    plan.trials.push(Trial {
                        host: host.clone(),
                        test: test.name.clone(),
                        limit: limits.of(&request.policy, test),
                    });
                    plan.owners.push((p, t, run));
                }
            }
            plan.scenarios.push(Collecting {
                scenario: s,
                runs: vec![vec![None; n]; tests.len()],
                pending: tests.len() * n,
                tests,
            });
        }
        plan
    }
}

/// Runs a phase's trials on one pool, and reports each of its scenarios as
/// soon as its last trial ends (one without tests has its empty result at
/// once, unreported).
fn run_phase(
    runner: &Runner,
    plan: PhasePlan,
    results: &mut [Option<ScenarioResult>],
    on: &mut dyn FnMut(Event<'_>),
) -> Result<(), Error> {
    let PhasePlan {
        mut scenarios,
        trials,
        owners,
    } = plan;
    for collecting in scenarios.iter().filter(|c| c.tests.is_empty()) {
        results[collecting.scenario] = Some(ScenarioResult::Ran { tests: Vec::new() });
    }
    let total = trials.len();
    let mut done = 0;
    runner.run(&trials, |index, result| {
        let (p, t, run) = owners[index];
        done += 1;
        let finished = scenarios[p].record(t, run, result);
        on(Event::Trial { done, total });
        if let Some(result) = finished {
            let s = scenarios[p].scenario;
            results[s] = Some(result);
            on(Event::Finished {
                scenario: s,
                result: results[s].as_ref().expect("just set"),
            });
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::suite::test_named;
    use outcome::TestOutcome;

    fn ended(secs: u64, passed: bool) -> TrialResult {
        TrialResult {
            outcome: if passed {
                TestOutcome::Passed
            } else {
                TestOutcome::timed_out(1.0)
            },
            duration: Duration::from_secs(secs),
        }
    }

    #[test]
    fn a_scenario_is_complete_with_its_last_trial_whatever_order_they_end_in() {
        let tests = vec![test_named("step1::a"), test_named("step2::b")];
        let mut collecting = Collecting {
            scenario: 7,
            runs: vec![vec![None; 2]; 2],
            pending: 4,
            tests: tests.clone(),
        };
        // Trials end out of order: test 1's second run first.
        assert!(collecting.record(1, 1, ended(4, false)).is_none());
        assert!(collecting.record(0, 0, ended(1, true)).is_none());
        assert!(collecting.record(1, 0, ended(3, true)).is_none());
        let Some(ScenarioResult::Ran { tests: runs }) = collecting.record(0, 1, ended(2, true))
        else {
            panic!("the last trial completes the scenario");
        };
        let seen: Vec<(String, Vec<u64>)> = runs
            .iter()
            .map(|t| {
                let secs = t.runs.iter().map(|r| r.duration.as_secs()).collect();
                (t.test.name.clone(), secs)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("step1::a".to_string(), vec![1, 2]),
                ("step2::b".to_string(), vec![3, 4])
            ]
        );
        assert!(runs[0].passed() && runs[1].flaky());
    }
}
