//! The judgement itself, in three parts: a plan (every correct
//! implementation, each run of the reference among them, and every mutant),
//! two rounds of engine calls (every test on everything, then the tests that
//! failed on a correct implementation again, to tell a race from a rule), and
//! the interpretation of the evidence as validity, thoroughness and
//! misconceptions; a last, small call runs fencelab's own suite on the missed
//! mutants to say what kind of observation exposes each.
//!
//! Invariant: what a test is told follows from its verdicts alone. A test is
//! racy when a correct implementation gave it both verdicts; it is blamed on a
//! freedom only when that freedom's single-freedom variant fails it on every
//! run; a misconception is named only for a test that fails on every run of
//! the reference. Nothing depends on the order trials ended in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::LearnerTests;
use super::report::TestsReport;
use crate::engine::builder::Implementation;
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Text;
use crate::lab::mutant::{self, Mutant};
use crate::lab::reference::{DEFAULT_FILE, REFERENCE};
use crate::lab::schedule;
use crate::lab::suite::{self, SuiteTest};
use crate::lab::wheat::{Wheat, Wheats};
use crate::output::progress::Progress;

/// The implementations a learner's tests are judged against.
#[derive(Debug, Clone)]
pub struct Judges {
    pub reference: String,
    pub wheats: Wheats,
    pub mutants: Vec<Mutant>,
    /// The lab's edition: the Python reference, wheats and mutants (a
    /// learner's Python tests), or the Rust ones.
    pub python: bool,
}

impl Judges {
    /// fencelab's own, or an instructor's (`--mutants DIR`, `--wheats DIR`,
    /// both written against the reference).
    pub fn load(mutants: Option<&Path>, wheats: Option<&Path>) -> Result<Judges, Error> {
        Ok(Judges {
            reference: REFERENCE.to_string(),
            wheats: match wheats {
                Some(dir) => Wheats::load_dir(dir, false)?,
                None => Wheats::builtin(),
            },
            mutants: match mutants {
                Some(dir) => mutant::load_dir(dir, &suite::test_names())?,
                None => mutant::builtin(),
            },
            python: false,
        })
    }

    /// The Python edition's: `python/lease.py`, `wheats-python/` and
    /// `mutants-python/`, or an instructor's written against `python/lease.py`.
    pub fn load_python(mutants: Option<&Path>, wheats: Option<&Path>) -> Result<Judges, Error> {
        Ok(Judges {
            reference: crate::lab::python::REFERENCE.to_string(),
            wheats: match wheats {
                Some(dir) => Wheats::load_dir(dir, true)?,
                None => Wheats::builtin_python(),
            },
            mutants: match mutants {
                Some(dir) => mutant::load_dir(dir, &suite::test_names())?,
                None => crate::lab::python::mutants(),
            },
            python: true,
        })
    }

    /// The judges of the edition `tests` are written for.
    pub(crate) fn load_for(
        tests: &LearnerTests,
        mutants: Option<&Path>,
        wheats: Option<&Path>,
    ) -> Result<Judges, Error> {
        if tests.python() {
            Judges::load_python(mutants, wheats)
        } else {
            Judges::load(mutants, wheats)
        }
    }

    /// The reference's file, as its implementations are named.
    pub(crate) fn file(&self) -> &'static str {
        if self.python {
            crate::lab::python::FILE
        } else {
            DEFAULT_FILE
        }
    }

    /// The reference (the edition's) under schedule `run` (`lab::schedule`).
    fn scheduled(&self, source: &str, run: usize) -> Result<String, mutant::Stale> {
        if self.python {
            super::python::scheduled(source, run)
        } else {
            schedule::scheduled(source, run)
        }
    }

    /// `source` whose `claim_many` lets the first owner lead every time
    /// (`lab::schedule::first_leads`).
    fn first_leads(&self, source: &str) -> Result<String, mutant::Stale> {
        if self.python {
            super::python::first_leads(source)
        } else {
            schedule::first_leads(source)
        }
    }
}

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    pub jobs: usize,
    /// A time limit per test [default: the policy's].
    pub timeout: Option<Duration>,
    /// A time limit for the build of the tests [default: the policy's].
    pub build_timeout: Option<Duration>,
    /// Each step's weight in the thoroughness (the course file's).
    pub weights: crate::lab::course::Weights,
}

/// A correct implementation: a run of the reference, or a wheat.
struct Correct<'a> {
    /// `reference` for every run of it, or the wheat's id.
    id: &'a str,
    title: Text,
    wheat: Option<&'a Wheat>,
    /// Index into the request's implementations.
    implementation: usize,
}

impl Correct<'_> {
    /// A wheat that differs from the reference in one freedom only.
    fn variant(&self) -> bool {
        self.wheat.is_some_and(|w| w.freedoms.len() == 1)
    }
}

/// What is judged against what: the implementations of one request, and
/// which correct implementation or mutant each is.
struct Plan<'a> {
    implementations: Vec<Implementation>,
    correct: Vec<Correct<'a>>,
    /// The mutants that apply to the reference, each with its
    /// implementation, and whether its `claim_many` races for real (it
    /// changes `claim_many`, so it cannot be scheduled as the reference).
    mutants: Vec<(&'a Mutant, usize, bool)>,
    /// The reference whose first owner always wins `claim_many`: it tells a
    /// test that assumes so from one that contradicts the contract.
    probe: usize,
}

/// Whose a run was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Judge {
    Correct(usize),
    Mutant(usize),
    Probe,
}

/// The freedom of which owner wins `claim_many` (`wheats/freedoms.toml`).
const WINNER: &str = "claim-many-winner";

/// How many runs of a test on an implementation whose `claim_many` races
/// for real make its verdict there evidence: the same on each of them.
const RACING_RUNS: usize = 3;

impl<'a> Plan<'a> {
    fn new(judges: &'a Judges) -> Result<Plan<'a>, Error> {
        let reference = &judges.reference;
        let file = judges.file();
        let mut implementations = Vec::new();
        let mut add = |source: String| {
            implementations.push(Implementation {
                shown_path: file.to_string(),
                source,
            });
            implementations.len() - 1
        };
        let mut correct = Vec::new();
        for run in 0..schedule::RUNS {
            let source = judges.scheduled(reference, run).map_err(|stale| {
                Error::internal(format!(
                    "the reference's runs do not apply: {}",
                    stale.describe(Path::new(file))
                ))
            })?;
            correct.push(Correct {
                id: "reference",
                title: reference_title(),
                wheat: None,
                implementation: add(source),
            });
        }
        for wheat in &judges.wheats.wheats {
            let code = wheat.code(reference).map_err(|stale| {
                Error::input(format!(
                    "{}: {}",
                    wheat.path.display(),
                    stale.describe(Path::new(file))
                ))
                .with_next(
                    "fix the wheat's `find` text so that it occurs exactly once in the reference",
                )
            })?;
            // A variant races in claim_many as the reference's first run does.
            let code = match wheat.freedoms.len() {
                1 => judges.scheduled(&code, 0).unwrap_or(code),
                _ => code,
            };
            correct.push(Correct {
                id: &wheat.id,
                title: wheat.title.clone(),
                wheat: Some(wheat),
                implementation: add(code),
            });
        }
        // A mutant that does not apply to the reference judges nothing;
        // one that keeps claim_many races as the reference's first run, so
        // that which owner wins is never chance (as the variants).
        let mutants = judges
            .mutants
            .iter()
            .filter_map(|m| {
                let code = m.apply(reference).ok()?;
                Some(match judges.scheduled(&code, 0) {
                    Ok(scheduled) => (m, add(scheduled), false),
                    Err(_) => (m, add(code), true),
                })
            })
            .collect();
        let probe = judges.first_leads(reference).map_err(|stale| {
            Error::internal(format!(
                "the reference's probe does not apply: {}",
                stale.describe(Path::new(file))
            ))
        })?;
        let probe = add(probe);
        Ok(Plan {
            implementations,
            correct,
            mutants,
            probe,
        })
    }

    /// Every test once on every implementation.
    fn first_round(&self) -> Vec<(Judge, Scenario)> {
        let correct = self.correct.iter().enumerate().map(|(c, correct)| {
            (
                Judge::Correct(c),
                scenario(correct.implementation, Tests::All),
            )
        });
        let mutants = (self.mutants.iter().enumerate()).map(|(m, &(_, implementation, _))| {
            (Judge::Mutant(m), scenario(implementation, Tests::All))
        });
        correct.chain(mutants).collect()
    }

    /// The tests that failed on a correct implementation, again: once more on
    /// each run of the reference, twice more on each other correct
    /// implementation they failed on, so that a verdict that depends on a race
    /// shows both sides and one that does not is seen to hold.
    fn second_round(&self, evidence: &Evidence) -> Vec<(Judge, Scenario)> {
        let suspects: Vec<&SuiteTest> = evidence
            .tests
            .iter()
            .filter(|t| evidence.fails_somewhere(self, &t.name))
            .collect();
        let mut scenarios = Vec::new();
        for repeat in 0..2 {
            for (c, correct) in self.correct.iter().enumerate() {
                let tests: Vec<SuiteTest> = suspects
                    .iter()
                    .filter(|t| {
                        if correct.wheat.is_none() {
                            repeat == 0
                        } else {
                            evidence.failed(&t.name, Judge::Correct(c))
                        }
                    })
                    .map(|t| (*t).clone())
                    .collect();
                if !tests.is_empty() {
                    scenarios.push((
                        Judge::Correct(c),
                        scenario(correct.implementation, Tests::Only(tests)),
                    ));
                }
            }
        }
        // A test that fails on the reference, on the reference whose first
        // owner always wins: passing there, it assumed the winner.
        let on_reference: Vec<SuiteTest> = evidence
            .tests
            .iter()
            .filter(|t| self.fails_on_the_reference(evidence, &t.name))
            .cloned()
            .collect();
        if !on_reference.is_empty() {
            scenarios.push((
                Judge::Probe,
                scenario(self.probe, Tests::Only(on_reference.clone())),
            ));
        }
        // On a mutant whose claim_many races for real, a verdict that could
        // count (a catch; a pass that could name a misconception) runs
        // again, so that only one seen on every run counts.
        for _ in 1..RACING_RUNS {
            for (m, &(_, implementation, racing)) in self.mutants.iter().enumerate() {
                let counts = |t: &&SuiteTest| {
                    evidence.failed(&t.name, Judge::Mutant(m)) || on_reference.contains(t)
                };
                let tests: Vec<SuiteTest> = match racing {
                    true => evidence.tests.iter().filter(counts).cloned().collect(),
                    false => Vec::new(),
                };
                if !tests.is_empty() {
                    scenarios.push((
                        Judge::Mutant(m),
                        scenario(implementation, Tests::Only(tests)),
                    ));
                }
            }
        }
        scenarios
    }

    /// `test` failed on every run of the reference (in the first round).
    fn fails_on_the_reference(&self, evidence: &Evidence, test: &str) -> bool {
        let reference: Vec<Judge> = (self.correct.iter().enumerate())
            .filter(|(_, c)| c.wheat.is_none())
            .map(|(c, _)| Judge::Correct(c))
            .collect();
        reference
            .iter()
            .all(|&j| evidence.failed_every_run(test, j))
    }
}

fn scenario(implementation: usize, tests: Tests) -> Scenario {
    Scenario {
        kind: ScenarioKind::Tests,
        implementation,
        tests,
    }
}

/// Judges `tests` against `judges`.
pub fn judge(
    tests: &LearnerTests,
    judges: &Judges,
    options: &Options,
    scratch: &Scratch,
    progress: &mut dyn Progress,
) -> Result<TestsReport, Error> {
    let plan = Plan::new(judges)?;
    let request = |round: &[(Judge, Scenario)]| Request {
        policy: Policy::of(Trust::LearnerTests).with_limits(options.timeout, options.build_timeout),
        suite: tests.suite.clone(),
        implementations: plan.implementations.clone(),
        scenarios: round.iter().map(|(_, s)| s.clone()).collect(),
        jobs: options.jobs,
    };
    let first = plan.first_round();
    let run = engine::run(scratch, &request(&first), &mut |event| {
        progress.engine(&event)
    })?;
    let mut report = TestsReport {
        schema: 1,
        name: tests.name.clone(),
        file: tests.shown.clone(),
        compile_errors: run.suite_errors.clone(),
        tests: Vec::new(),
        valid: false,
        steps: Vec::new(),
        score: 0.0,
        correct_implementations: plan.correct.len(),
        reference_runs: schedule::RUNS,
        mutants: plan.mutants.len(),
        reveal: crate::lab::course::Reveal::Titles,
        exit_code: ExitCode::NotJudgeable,
    };
    if report.compile_errors.is_some() {
        return Ok(report);
    }
    for (c, result) in plan.correct.iter().zip(&run.results) {
        if let ScenarioResult::Unviable { errors } = result {
            return Err(Error::input(format!(
                "the correct implementation {} does not compile:\n{errors}",
                c.id
            ))
            .with_next("fix the wheat (see wheats/README.md)"));
        }
    }
    let mut evidence = Evidence {
        tests: run.tests.clone(),
        runs: BTreeMap::new(),
    };
    evidence.add(&first, &run.results);
    let second = plan.second_round(&evidence);
    if !second.is_empty() {
        let again = engine::run(scratch, &request(&second), &mut |event| {
            progress.engine(&event)
        })?;
        evidence.add(&second, &again.results);
    }
    report.tests = evidence
        .tests
        .iter()
        .map(|test| judged(&plan, &evidence, &test.name))
        .collect();
    report.reference_runs = evidence
        .tests
        .iter()
        .map(|t| evidence.on(&plan, &t.name, "reference").0)
        .max()
        .unwrap_or(schedule::RUNS);
    report.valid = report.tests.iter().all(|t| t.valid);
    let caught: BTreeSet<&str> = report
        .tests
        .iter()
        .flat_map(|t| t.catches.iter().map(String::as_str))
        .collect();
    let mutants: Vec<&Mutant> = plan.mutants.iter().map(|(m, _, _)| *m).collect();
    let missed: Vec<&Mutant> = mutants
        .iter()
        .copied()
        .filter(|m| !caught.contains(m.id.as_str()))
        .collect();
    let mutant_impl: BTreeMap<&str, usize> = plan
        .mutants
        .iter()
        .map(|(m, i, _)| (m.id.as_str(), *i))
        .collect();
    let observations = observations(&missed, &plan, &mutant_impl, options, scratch)?;
    report.steps = thoroughness(&mutants, &caught, &observations);
    report.score = score(&report.steps, &options.weights);
    report.exit_code = report.exit();
    Ok(report)
}

/// The reference as a learner knows it: by what it is, not by fencelab's
/// file name, which is not in the learner's lab.
fn reference_title() -> Text {
    Text {
        ja: "参照実装".to_string(),
        en: "the reference".to_string(),
    }
}

mod evidence;
mod thoroughness;

use evidence::{Evidence, judged};
use thoroughness::{observations, score, thoroughness};

#[cfg(test)]
mod tests;
