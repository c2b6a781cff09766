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
use super::report::{Invalid, JudgedTest, MissedMutant, StepThoroughness, TestsReport, WrongOn};
use crate::engine::builder::Implementation;
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Text;
use crate::lab::mutant::{self, Mutant};
use crate::lab::observation::ObservationKind;
use crate::lab::reference::{DEFAULT_FILE, REFERENCE};
use crate::lab::schedule;
use crate::lab::suite::{self, SuiteFiles, SuiteTest};
use crate::lab::wheat::{Wheat, Wheats};
use crate::lab::worksheet::SLUGS;
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

/// Every run of every test, in the order of the rounds' scenarios (never in
/// the order trials happened to end).
struct Evidence {
    tests: Vec<SuiteTest>,
    runs: BTreeMap<String, Vec<(Judge, TestOutcome)>>,
}

impl Evidence {
    fn add(&mut self, round: &[(Judge, Scenario)], results: &[ScenarioResult]) {
        for ((judge, _), result) in round.iter().zip(results) {
            for t in result.tests().unwrap_or_default() {
                for run in &t.runs {
                    self.runs
                        .entry(t.test.name.clone())
                        .or_default()
                        .push((*judge, run.outcome.clone()));
                }
            }
        }
    }

    fn of<'s>(&'s self, test: &str) -> impl Iterator<Item = &'s (Judge, TestOutcome)> {
        self.runs.get(test).into_iter().flatten()
    }

    /// It failed on `judge` (on some run).
    fn failed(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, o)| *j == judge && !o.passed())
    }

    /// It passed on `judge` (on every run).
    fn passed(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, _)| *j == judge) && !self.failed(test, judge)
    }

    /// It ran on `judge` and failed on every run there.
    fn failed_every_run(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, _)| *j == judge)
            && self.of(test).all(|(j, o)| *j != judge || !o.passed())
    }

    fn fails_somewhere(&self, plan: &Plan, test: &str) -> bool {
        (0..plan.correct.len()).any(|c| self.failed(test, Judge::Correct(c)))
    }

    /// Its runs on the correct implementation `id` (every run of the
    /// reference together): how many, the failures, in order.
    fn on<'s>(&'s self, plan: &Plan, test: &str, id: &str) -> (usize, Vec<&'s TestOutcome>) {
        let mut runs = 0;
        let mut failures = Vec::new();
        for (judge, outcome) in self.of(test) {
            if let Judge::Correct(c) = judge
                && plan.correct[*c].id == id
            {
                runs += 1;
                if !outcome.passed() {
                    failures.push(outcome);
                }
            }
        }
        (runs, failures)
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

/// One test, judged from the evidence alone.
fn judged(plan: &Plan, evidence: &Evidence, test: &str) -> JudgedTest {
    // Per correct implementation (the reference's runs together), in the
    // plan's order: the reference first, then the wheats.
    let mut ids: Vec<&Correct> = Vec::new();
    for c in &plan.correct {
        if !ids.iter().any(|seen| seen.id == c.id) {
            ids.push(c);
        }
    }
    let mut wrong_on: Vec<(&Correct, WrongOn)> = ids
        .iter()
        .filter_map(|c| {
            let (runs, failures) = evidence.on(plan, test, c.id);
            let first = failures.first()?;
            Some((
                *c,
                WrongOn {
                    implementation: c.id.to_string(),
                    title: c.title.clone(),
                    outcome: first.label(),
                    message: first.message().unwrap_or_default(),
                    runs,
                    failed: failures.len(),
                },
            ))
        })
        .collect();
    // The most telling first: the reference, the variants, the full wheats.
    wrong_on.sort_by_key(|(c, _)| (c.wheat.is_some(), !c.variant()));
    // Failing on every run of the reference and passing where the first
    // owner always wins, it assumed which owner wins: that freedom, with its
    // variant as the evidence. Only what every judgement shows is said: the
    // reference's runs and that variant (the full wheats' claim_many races
    // for real, so their verdicts there are chance).
    let winner = evidence.passed(test, Judge::Probe)
        && wrong_on.iter().any(|(c, w)| c.wheat.is_none() && !w.racy());
    if winner {
        wrong_on.retain(|(c, _)| {
            c.wheat.is_none()
                || c.variant()
                    && c.wheat
                        .is_some_and(|w| w.freedoms.iter().any(|f| f == WINNER))
        });
    }
    let racy = wrong_on.iter().any(|(_, w)| w.racy());
    let on_reference = wrong_on.iter().any(|(c, _)| c.wheat.is_none());
    if racy {
        // Only what every judgement shows: the implementations that gave both
        // verdicts (the reference alone, when it did: its runs decide the race
        // the same way every time, a full wheat's do not), and the variants
        // (scheduled as the reference) that failed it every time.
        let reference_races = wrong_on.iter().any(|(c, w)| c.wheat.is_none() && w.racy());
        wrong_on
            .retain(|(c, w)| c.variant() || c.wheat.is_none() || (w.racy() && !reference_races));
    }
    // Failing on every run of the reference and passing on every run of a
    // single-freedom variant, it demands the variant's side of a freedom the
    // reference takes the other way (Python's `done is False`: the reference
    // answers 0).
    let passes_on = |c: &Correct| {
        let (runs, failures) = evidence.on(plan, test, c.id);
        runs > 0 && failures.is_empty()
    };
    let mut demands: Vec<String> = match on_reference && !racy && !winner {
        true => (ids.iter())
            .filter(|c| c.variant() && passes_on(c))
            .flat_map(|c| c.wheat.map(|w| w.freedoms.clone()).unwrap_or_default())
            .filter(|f| f != WINNER)
            .collect(),
        false => Vec::new(),
    };
    demands.sort();
    demands.dedup();
    // It ended its own process before it said how it went, on every run of
    // the reference: nothing it observed can be read.
    let no_verdict = ids.iter().filter(|c| c.wheat.is_none()).any(|c| {
        let (runs, failures) = evidence.on(plan, test, c.id);
        runs > 0
            && failures.len() == runs
            && failures.iter().all(|f| {
                matches!(
                    f,
                    TestOutcome::Failed {
                        kind: FailureKind::NoVerdict,
                        ..
                    }
                )
            })
    });
    let assumed: Vec<String> = if winner {
        vec![WINNER.to_string()]
    } else if !demands.is_empty() {
        demands
    } else if on_reference && !racy {
        Vec::new()
    } else {
        let mut freedoms: Vec<String> = wrong_on
            .iter()
            .filter(|(c, w)| c.variant() && !w.racy())
            .flat_map(|(c, _)| c.wheat.map(|w| w.freedoms.clone()).unwrap_or_default())
            .collect();
        freedoms.sort();
        freedoms.dedup();
        freedoms
    };
    let invalid = match () {
        _ if wrong_on.is_empty() => None,
        _ if no_verdict => Some(Invalid::NoVerdict),
        _ if racy => Some(Invalid::Racy),
        _ if winner || on_reference && !assumed.is_empty() => Some(Invalid::AssumesAFreedom),
        _ if on_reference => Some(Invalid::FailsOnReference),
        _ if !assumed.is_empty() => Some(Invalid::AssumesAFreedom),
        _ => Some(Invalid::FailsOnAFullWheat),
    };
    let misconceptions = if invalid == Some(Invalid::FailsOnReference) {
        misconceptions(plan, evidence, test)
    } else {
        Vec::new()
    };
    let catches = if invalid.is_none() {
        (plan.mutants.iter().enumerate())
            .filter(|(m, _)| evidence.failed_every_run(test, Judge::Mutant(*m)))
            .map(|(_, (m, _, _))| m.id.clone())
            .collect()
    } else {
        Vec::new()
    };
    JudgedTest {
        test: test.to_string(),
        valid: invalid.is_none(),
        invalid,
        wrong_on: wrong_on.into_iter().map(|(_, w)| w).collect(),
        assumed,
        misconceptions,
        catches,
    }
}

/// The misunderstanding a test that fails on the reference was most likely
/// written from: among the mutants it passes on (whose behaviour is what it
/// expected), those that change the fewest of the learner's other tests'
/// verdicts, then the closest to the reference (the fewest of fencelab's
/// own tests kill it); the best, and the second when it is as close by the
/// learner's tests. None when it passes on no mutant.
fn misconceptions(plan: &Plan, evidence: &Evidence, test: &str) -> Vec<String> {
    let reference: Vec<Judge> = (plan.correct.iter().enumerate())
        .filter(|(_, c)| c.wheat.is_none())
        .map(|(c, _)| Judge::Correct(c))
        .collect();
    let steady = |other: &str| {
        let passes = reference
            .iter()
            .filter(|&&j| evidence.passed(other, j))
            .count();
        match passes {
            0 => Some(false),
            n if n == reference.len() => Some(true),
            _ => None,
        }
    };
    let mut candidates: Vec<(usize, usize, &str)> = (plan.mutants.iter().enumerate())
        .filter(|(m, _)| evidence.passed(test, Judge::Mutant(*m)))
        .map(|(m, (mutant, _, _))| {
            let changed = (evidence.tests.iter())
                .filter(|other| other.name != test)
                .filter(|other| {
                    steady(&other.name).is_some_and(|on_reference| {
                        on_reference != evidence.passed(&other.name, Judge::Mutant(m))
                    })
                })
                .count();
            (changed, mutant.killers.len(), mutant.id.as_str())
        })
        .collect();
    candidates.sort();
    let best = candidates.first().map(|c| c.0);
    candidates
        .iter()
        .take(2)
        .filter(|c| Some(c.0) == best)
        .map(|c| c.2.to_string())
        .collect()
}

/// Per step of the worksheet, the mutants caught and those missed.
fn thoroughness(
    mutants: &[&Mutant],
    caught: &BTreeSet<&str>,
    observations: &BTreeMap<&str, ObservationKind>,
) -> Vec<StepThoroughness> {
    (1..=8u32)
        .filter_map(|step| {
            let of_step: Vec<&Mutant> =
                mutants.iter().copied().filter(|m| m.step == step).collect();
            if of_step.is_empty() {
                return None;
            }
            let (hit, missed): (Vec<&Mutant>, Vec<&Mutant>) =
                of_step.iter().partition(|m| caught.contains(m.id.as_str()));
            Some(StepThoroughness {
                step,
                slug: SLUGS[step as usize - 1],
                caught: hit.len(),
                total: of_step.len(),
                caught_mutants: hit.iter().map(|m| m.id.clone()).collect(),
                missed: missed
                    .iter()
                    .map(|m| MissedMutant {
                        id: m.id.clone(),
                        title: m.titles.clone(),
                        observation: observations.get(m.id.as_str()).copied(),
                        diff: None,
                    })
                    .collect(),
            })
        })
        .collect()
}

/// Thoroughness, 0 to 100: the mean of the steps' shares caught, each
/// counted by its weight.
fn score(steps: &[StepThoroughness], weights: &crate::lab::course::Weights) -> f64 {
    let shares = (steps.iter()).map(|s| (s.step, s.caught as f64 / s.total.max(1) as f64));
    (weights.mean(shares) * 100.0 * 100.0).round() / 100.0
}

/// The reference as a learner knows it: by what it is, not by fencelab's
/// file name, which is not in the learner's lab.
fn reference_title() -> Text {
    Text {
        ja: "参照実装".to_string(),
        en: "the reference".to_string(),
    }
}

/// For each mutant in `missed`, the kind of observation by which fencelab's
/// own suite kills it (its declared killers, run against it). The
/// implementations are the judgement's own, so that their server is already
/// built; only the judge is fencelab's.
fn observations<'a>(
    missed: &[&'a Mutant],
    plan: &Plan,
    mutant_impl: &BTreeMap<&str, usize>,
    options: &Options,
    scratch: &Scratch,
) -> Result<BTreeMap<&'a str, ObservationKind>, Error> {
    let scenarios: Vec<Scenario> = missed
        .iter()
        .filter_map(|m| {
            Some(Scenario {
                kind: ScenarioKind::Tests,
                implementation: *mutant_impl.get(m.id.as_str())?,
                tests: Tests::Only(m.killers.iter().map(|k| suite::test_named(k)).collect()),
            })
        })
        .collect();
    if scenarios.is_empty() {
        return Ok(BTreeMap::new());
    }
    let request = Request {
        policy: Policy::of(Trust::Instructor),
        suite: SuiteFiles::builtin(),
        implementations: plan.implementations.clone(),
        scenarios,
        jobs: options.jobs,
    };
    let run = engine::run(scratch, &request, &mut |_| {})?;
    Ok(missed
        .iter()
        .map(|m| m.id.as_str())
        .zip(&run.results)
        .filter_map(|(id, result)| {
            let kind = result.tests()?.iter().find_map(|t| match t.outcome() {
                // The implementation panicked or died in the call: what
                // exposes it is making the call and looking at what comes back.
                TestOutcome::Failed {
                    kind: FailureKind::Panicked | FailureKind::Crashed,
                    ..
                } => Some(ObservationKind::ReturnValue),
                outcome => ObservationKind::of_failure(&outcome.message()?),
            })?;
            Some((id, kind))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thoroughness_counts_each_step_by_the_courses_weight() {
        let step = |step, caught, total| StepThoroughness {
            step,
            slug: crate::lab::worksheet::SLUGS[step as usize - 1],
            caught,
            total,
            caught_mutants: Vec::new(),
            missed: Vec::new(),
        };
        let steps = [step(4, 1, 2), step(8, 4, 4)];
        let mut weights = crate::lab::course::Weights::default();
        assert_eq!(score(&steps, &weights), 75.0);
        weights.0[7] = 3.0;
        assert_eq!(score(&steps, &weights), 87.5, "(0.5 + 3) / 4");
        assert_eq!(score(&[], &weights), 0.0);
    }
}
