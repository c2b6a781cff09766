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

// A third edition plugs in at `editions`: a module beside `python`, and an
// arm in `editions::judge` and `editions::host`. Its implementations become
// `Host`s whose program is its server; the cage shows what that server reads.
pub mod builder;
pub(crate) mod cargo;
mod crates;
mod editions;
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
use builder::{Hosting, Implementation};
use editions::Builds;
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
    let builds = match editions::build(scratch, request, &detail)? {
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
