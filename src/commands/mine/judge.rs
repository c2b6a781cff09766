//! The judgement itself: one engine call runs every test of the learner's
//! against every implementation (the reference twice, the wheats, the
//! mutants), and the results are read as validity, thoroughness and
//! misconceptions; a second, small call runs fencelab's own suite on the
//! missed mutants to say what kind of observation exposes each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::LearnerTests;
use super::report::{JudgedTest, MissedMutant, StepThoroughness, TestsReport, WrongOn};
use crate::commands::predict::ObservationKind;
use crate::engine::builder::Implementation;
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Event, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Text;
use crate::lab::mutant::{self, Mutant};
use crate::lab::reference::{DEFAULT_FILE, REFERENCE};
use crate::lab::suite::{self, SuiteFiles, SuiteTest};
use crate::lab::wheat::{Wheat, Wheats};
use crate::lab::worksheet::SLUGS;

/// The implementations a learner's tests are judged against.
#[derive(Debug, Clone)]
pub struct Judges {
    pub reference: String,
    pub wheats: Wheats,
    pub mutants: Vec<Mutant>,
}

impl Judges {
    /// fencelab's own, or an instructor's (`--mutants DIR`, `--wheats DIR`,
    /// both written against the reference).
    pub fn load(mutants: Option<&Path>, wheats: Option<&Path>) -> Result<Judges, Error> {
        Ok(Judges {
            reference: REFERENCE.to_string(),
            wheats: match wheats {
                Some(dir) => Wheats::load_dir(dir)?,
                None => Wheats::builtin(),
            },
            mutants: match mutants {
                Some(dir) => mutant::load_dir(dir, &suite::test_names())?,
                None => mutant::builtin(),
            },
        })
    }
}

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    pub jobs: usize,
    /// A time limit per test [default: the policy's].
    pub timeout: Option<Duration>,
}

/// A correct implementation's name and title.
#[derive(Clone)]
struct Correct<'a> {
    id: &'a str,
    title: Text,
    wheat: Option<&'a Wheat>,
}

/// Judges `tests` against `judges`.
pub fn judge(
    tests: &LearnerTests,
    judges: &Judges,
    options: &Options,
    scratch: &Scratch,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<TestsReport, Error> {
    let reference = &judges.reference;
    let implementation = |source: String| Implementation {
        shown_path: DEFAULT_FILE.to_string(),
        source,
    };
    // The reference twice (a test that disagrees with itself is not valid),
    // then the wheats: the correct ones. Then the mutants.
    let mut implementations = vec![implementation(reference.clone())];
    let mut correct = vec![
        Correct {
            id: "reference",
            title: reference_title(),
            wheat: None,
        };
        2
    ];
    let mut scenario_impl = vec![0, 0];
    for wheat in &judges.wheats.wheats {
        let code = wheat.code(reference).map_err(|stale| {
            Error::input(format!(
                "{}: {}",
                wheat.path.display(),
                stale.describe(Path::new(DEFAULT_FILE))
            ))
            .with_next(
                "fix the wheat's `find` text so that it occurs exactly once in the reference",
            )
        })?;
        scenario_impl.push(implementations.len());
        implementations.push(implementation(code));
        correct.push(Correct {
            id: &wheat.id,
            title: wheat.title.clone(),
            wheat: Some(wheat),
        });
    }
    let mut mutants: Vec<&Mutant> = Vec::new();
    for m in &judges.mutants {
        // A mutant that does not apply to the reference judges nothing.
        if let Ok(code) = m.apply(reference) {
            scenario_impl.push(implementations.len());
            implementations.push(implementation(code));
            mutants.push(m);
        }
    }
    let mutant_impl: BTreeMap<&str, usize> = mutants
        .iter()
        .zip(&scenario_impl[correct.len()..])
        .map(|(m, &i)| (m.id.as_str(), i))
        .collect();
    let request = Request {
        policy: Policy::of(Trust::LearnerTests).with_limits(options.timeout, None),
        suite: tests.suite.clone(),
        implementations,
        scenarios: scenario_impl
            .iter()
            .map(|&implementation| Scenario {
                kind: ScenarioKind::Tests,
                implementation,
                tests: Tests::All,
            })
            .collect(),
        jobs: options.jobs,
    };
    let run = engine::run(scratch, &request, &mut |event| {
        if let Event::Trial { done, total } = event {
            progress(done, total);
        }
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
        correct_implementations: correct.len(),
        mutants: mutants.len(),
        exit_code: ExitCode::NotJudgeable,
    };
    if report.compile_errors.is_some() {
        return Ok(report);
    }
    for (c, result) in correct.iter().zip(&run.results) {
        if let ScenarioResult::Unviable { errors } = result {
            return Err(Error::input(format!(
                "the correct implementation {} does not compile:\n{errors}",
                c.id
            ))
            .with_next("fix the wheat (see wheats/README.md)"));
        }
    }
    let outcome = |scenario: usize, test: &SuiteTest| -> Option<&TestOutcome> {
        run.results[scenario]
            .tests()?
            .iter()
            .find(|t| t.test == *test)
            .map(|t| t.outcome())
    };
    let mutant_scenarios = correct.len()..run.results.len();
    for test in &run.tests {
        let mut wrong_on: Vec<WrongOn> = Vec::new();
        let mut failing_wheats: Vec<&Wheat> = Vec::new();
        for (s, c) in correct.iter().enumerate() {
            match outcome(s, test) {
                Some(TestOutcome::Passed) => {}
                Some(failed) => {
                    failing_wheats.extend(c.wheat);
                    if !wrong_on.iter().any(|w| w.implementation == c.id) {
                        wrong_on.push(WrongOn {
                            implementation: c.id.to_string(),
                            title: c.title.clone(),
                            outcome: failed.label(),
                            message: failed.message().unwrap_or_default(),
                        });
                    }
                }
                None => {}
            }
        }
        // The most telling first: the reference, then the wheats that differ
        // from it in one freedom only.
        let freedoms_of = |id: &str| {
            judges
                .wheats
                .wheats
                .iter()
                .find(|w| w.id == id)
                .map_or(0, |w| w.freedoms.len())
        };
        wrong_on.sort_by_key(|w| {
            (
                w.implementation != "reference",
                freedoms_of(&w.implementation) != 1,
            )
        });
        let on_reference = wrong_on.iter().any(|w| w.implementation == "reference");
        let caught: Vec<usize> = mutant_scenarios
            .clone()
            .filter(|&s| outcome(s, test).is_some_and(|o| !o.passed()))
            .map(|s| s - correct.len())
            .collect();
        let misconceptions = if on_reference {
            mutant_scenarios
                .clone()
                .filter(|&s| outcome(s, test).is_some_and(TestOutcome::passed))
                .map(|s| mutants[s - correct.len()].id.clone())
                .take(3)
                .collect()
        } else {
            Vec::new()
        };
        report.tests.push(JudgedTest {
            test: test.name.clone(),
            valid: wrong_on.is_empty(),
            assumed: if on_reference {
                Vec::new()
            } else {
                assumed(&failing_wheats)
            },
            wrong_on,
            misconceptions,
            catches: caught.iter().map(|&m| mutants[m].id.clone()).collect(),
        });
    }
    report.valid = report.tests.iter().all(|t| t.valid);
    let caught: BTreeSet<&str> = report
        .tests
        .iter()
        .filter(|t| t.valid)
        .flat_map(|t| t.catches.iter().map(String::as_str))
        .collect();
    let missed: Vec<&Mutant> = mutants
        .iter()
        .copied()
        .filter(|m| !caught.contains(m.id.as_str()))
        .collect();
    let observations = observations(&missed, &request, &mutant_impl, options, scratch)?;
    for step in 1..=8u32 {
        let of_step: Vec<&Mutant> = mutants.iter().copied().filter(|m| m.step == step).collect();
        if of_step.is_empty() {
            continue;
        }
        report.steps.push(StepThoroughness {
            step,
            slug: SLUGS[step as usize - 1],
            caught: of_step
                .iter()
                .filter(|m| caught.contains(m.id.as_str()))
                .count(),
            total: of_step.len(),
            caught_mutants: of_step
                .iter()
                .filter(|m| caught.contains(m.id.as_str()))
                .map(|m| m.id.clone())
                .collect(),
            missed: of_step
                .iter()
                .filter(|m| !caught.contains(m.id.as_str()))
                .map(|m| MissedMutant {
                    id: m.id.clone(),
                    title: m.titles.clone(),
                    observation: observations.get(m.id.as_str()).copied(),
                })
                .collect(),
        });
    }
    let shares: Vec<f64> = report
        .steps
        .iter()
        .map(|s| s.caught as f64 / s.total as f64)
        .collect();
    report.score = if shares.is_empty() {
        0.0
    } else {
        (shares.iter().sum::<f64>() / shares.len() as f64 * 100.0 * 100.0).round() / 100.0
    };
    report.exit_code = report.exit();
    Ok(report)
}

fn reference_title() -> Text {
    Text {
        ja: "参照実装（src/lease.rs）".to_string(),
        en: "the reference (src/lease.rs)".to_string(),
    }
}

/// The freedoms a test that failed on the wheats `failing` most likely
/// assumed: those of the single-freedom wheats (variants) it failed on, which
/// differ from the reference in nothing else; otherwise those that every
/// wheat it failed on takes. (A wheat it passed on may take a freedom too and
/// not differ in the way the test looks: a winner that varies passes a test
/// that only asks the first owner to win once.)
fn assumed(failing: &[&Wheat]) -> Vec<String> {
    let single: BTreeSet<&String> = failing
        .iter()
        .filter(|w| w.freedoms.len() == 1)
        .flat_map(|w| &w.freedoms)
        .collect();
    if !single.is_empty() {
        return single.into_iter().cloned().collect();
    }
    let Some((first, rest)) = failing.split_first() else {
        return Vec::new();
    };
    first
        .freedoms
        .iter()
        .filter(|f| rest.iter().all(|w| w.freedoms.contains(f)))
        .cloned()
        .collect()
}

/// For each mutant in `missed`, the kind of observation by which fencelab's
/// own suite kills it (its declared killers, run against it). The
/// implementations are the judgement's own, so that their server is already
/// built; only the judge is fencelab's.
fn observations<'a>(
    missed: &[&'a Mutant],
    judged: &Request,
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
        implementations: judged.implementations.clone(),
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
