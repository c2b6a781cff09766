//! The engine: builds implementations against the suite and runs every test
//! of every implementation in isolated processes, under one trust policy.
//! Every command is a front end over one call, [`run`].
//!
//! The stages of a run, in order (each owned by one file):
//! 1. write the scratch crates and build them with cargo: the judge (the
//!    suite bound to the bridge's proxy) and the servers hosting the
//!    implementations (`builder`, `cargo`, `scratch`); an implementation that
//!    does not compile is unviable and the others are built without it;
//! 2. ask both programs who they are, so that a stale binary cannot pass for
//!    a fresh one (`builder`);
//! 3. run the scenarios (`Scenario`): the baseline first, if there is one,
//!    then every other one, each test of each scenario a trial of its own, a
//!    judge process under a time limit (`runner`, `process`); a trial's verdict
//!    is the judge's exit status (`outcome`);
//! 4. release what was built to the garbage collector (`scratch::Pin`).
//!
//! What the run may trust, and how long things may take, is its `Policy`.

pub mod builder;
mod cargo;
mod crates;
mod identity;
pub mod outcome;
pub mod policy;
pub(crate) mod process;
pub mod runner;
mod scenario;
pub mod scratch;

pub use scenario::{Scenario, ScenarioKind, ScenarioResult, TestRuns};

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::lab::suite::SuiteTest;
use builder::{Build, Hosting, Implementation, TimedOut};
use policy::Policy;
use runner::{Runner, Trial, TrialResult};

use scratch::Scratch;

/// What one engine call does.
#[derive(Debug, Clone)]
pub struct Request {
    pub policy: Policy,
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
    Building { implementations: usize },
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
    /// Per scenario, in the order given.
    pub results: Vec<ScenarioResult>,
}

/// The engine's one call: builds the request's implementations against the
/// suite, runs its scenarios under its policy, and reports each scenario's
/// result as soon as it is known. Unviable implementations are reported first.
pub fn run(
    scratch: &Scratch,
    request: &Request,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Run, Error> {
    let policy = &request.policy;
    let start = Instant::now();
    on(Event::Building {
        implementations: request.implementations.len(),
    });
    let builds = build(scratch, policy, &request.implementations)?;
    let hosting: Vec<&Hosting> = builds.iter().flat_map(|b| &b.hosting).collect();
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
        return Ok(finish(results, build_secs));
    };
    let runner = Runner {
        judge,
        jobs: request.jobs,
        output_cap: policy.judge_output_cap,
        hunt_orphans: policy.hunt_orphans,
    };
    let (baseline, rest): (Vec<usize>, Vec<usize>) = (0..request.scenarios.len())
        .filter(|&i| results[i].is_none())
        .partition(|&i| request.scenarios[i].kind == ScenarioKind::Baseline);
    let mut limits = Limits::Baseline(policy.baseline_limit());
    for phase in [baseline, rest] {
        if !phase.is_empty() {
            run_phase(
                &runner,
                request,
                &hosting,
                &phase,
                &limits,
                &mut results,
                on,
            )?;
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
    Ok(finish(results, build_secs))
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

fn finish(results: Vec<Option<ScenarioResult>>, build_secs: f64) -> Run {
    Run {
        build_secs,
        results: results
            .into_iter()
            .map(|r| r.unwrap_or(ScenarioResult::NotRun))
            .collect(),
    }
}

/// A build (and the pin that keeps it) as the run uses it.
struct Built {
    judge: Option<std::path::PathBuf>,
    hosting: Vec<Hosting>,
    _pin: Option<scratch::Pin>,
}

/// Builds every implementation as the policy says: together, and, when that
/// runs out of time and the policy allows, each alone, so that one that makes
/// the compiler loop fails alone at the cost of its own limit (the others are
/// cached by then). The result has one hosting per implementation, in order.
fn build(
    scratch: &Scratch,
    policy: &Policy,
    implementations: &[Implementation],
) -> Result<Vec<Built>, Error> {
    let limit = policy.build_limit;
    let of = |build: Build| Built {
        judge: Some(build.judge),
        hosting: build.hosting,
        _pin: Some(build.pin),
    };
    match builder::build(scratch, implementations, limit, policy.servers)? {
        Ok(build) => Ok(vec![of(build)]),
        Err(TimedOut(limit)) if policy.build_alone_on_timeout && implementations.len() > 1 => {
            implementations
                .iter()
                .map(|one| {
                    Ok(
                        match builder::build(
                            scratch,
                            std::slice::from_ref(one),
                            Some(limit),
                            policy.servers,
                        )? {
                            Ok(build) => of(build),
                            Err(TimedOut(limit)) => Built {
                                judge: None,
                                hosting: vec![Hosting::Unviable {
                                    errors: timed_out(limit),
                                }],
                                _pin: None,
                            },
                        },
                    )
                })
                .collect()
        }
        Err(TimedOut(limit)) if policy.build_alone_on_timeout => Ok(vec![Built {
            judge: None,
            hosting: vec![Hosting::Unviable {
                errors: timed_out(limit),
            }],
            _pin: None,
        }]),
        Err(TimedOut(limit)) => Err(Error::environment(timed_out(limit))
            .with_next("raise the limit with --build-timeout SECS")),
    }
}

fn timed_out(limit: Duration) -> String {
    format!(
        "the build took longer than {:.0} s and was stopped",
        limit.as_secs_f64()
    )
}

/// Runs the scenarios `phase` (indices), all their trials on one pool.
fn run_phase(
    runner: &Runner,
    request: &Request,
    hosting: &[&Hosting],
    phase: &[usize],
    limits: &Limits,
    results: &mut [Option<ScenarioResult>],
    on: &mut dyn FnMut(Event<'_>),
) -> Result<(), Error> {
    // Every trial, and whose (scenario, test, run) it is.
    let mut trials = Vec::new();
    let mut owner = Vec::new();
    let mut runs: Vec<Vec<Vec<Option<TrialResult>>>> = Vec::new();
    let mut pending = Vec::new();
    for (p, &s) in phase.iter().enumerate() {
        let scenario = &request.scenarios[s];
        if scenario.tests.is_empty() {
            results[s] = Some(ScenarioResult::Ran { tests: Vec::new() });
        }
        let Hosting::Hosted { key, server } = hosting[scenario.implementation] else {
            unreachable!("unviable scenarios are finished before any phase");
        };
        let n = scenario.kind.runs();
        runs.push(vec![vec![None; n]; scenario.tests.len()]);
        pending.push(scenario.tests.len() * n);
        for run in 0..n {
            for (t, test) in scenario.tests.iter().enumerate() {
                trials.push(Trial {
                    server: server.clone(),
                    key: key.clone(),
                    test: test.name.clone(),
                    limit: limits.of(&request.policy, test),
                });
                owner.push((p, t, run));
            }
        }
    }
    let total = trials.len();
    let mut done = 0;
    runner.run(&trials, |index, result| {
        let (p, t, run) = owner[index];
        runs[p][t][run] = Some(result);
        pending[p] -= 1;
        done += 1;
        on(Event::Trial { done, total });
        if pending[p] == 0 {
            let s = phase[p];
            let tests = request.scenarios[s]
                .tests
                .iter()
                .zip(std::mem::take(&mut runs[p]))
                .map(|(test, runs)| TestRuns {
                    test: test.clone(),
                    runs: runs
                        .into_iter()
                        .map(|r| r.expect("every run ended"))
                        .collect(),
                })
                .collect();
            results[s] = Some(ScenarioResult::Ran { tests });
            on(Event::Finished {
                scenario: s,
                result: results[s].as_ref().expect("just set"),
            });
        }
    })?;
    Ok(())
}
