//! The evidence of a judgement read as one verdict per test: every run kept in
//! the rounds' order, then per test the implementations it was wrong on, the
//! freedom it assumed, the misconception it was written from, and the mutants
//! it catches. Only what every judgement would show is said.

use std::collections::BTreeMap;

use super::{Correct, Judge, Plan, WINNER};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::{Scenario, ScenarioResult};
use crate::judging::report::{Invalid, JudgedTest, WrongOn};
use crate::lab::suite::SuiteTest;

/// Every run of every test, in the order of the rounds' scenarios (never in
/// the order trials happened to end).
pub(super) struct Evidence {
    pub(super) tests: Vec<SuiteTest>,
    pub(super) runs: BTreeMap<String, Vec<(Judge, TestOutcome)>>,
}

impl Evidence {
    pub(super) fn add(&mut self, round: &[(Judge, Scenario)], results: &[ScenarioResult]) {
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
    pub(super) fn failed(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, o)| *j == judge && !o.passed())
    }

    /// It passed on `judge` (on every run).
    fn passed(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, _)| *j == judge) && !self.failed(test, judge)
    }

    /// It ran on `judge` and failed on every run there.
    pub(super) fn failed_every_run(&self, test: &str, judge: Judge) -> bool {
        self.of(test).any(|(j, _)| *j == judge)
            && self.of(test).all(|(j, o)| *j != judge || !o.passed())
    }

    pub(super) fn fails_somewhere(&self, plan: &Plan, test: &str) -> bool {
        (0..plan.correct.len()).any(|c| self.failed(test, Judge::Correct(c)))
    }

    /// Its runs on the correct implementation `id` (every run of the
    /// reference together): how many, the failures, in order.
    pub(super) fn on<'s>(
        &'s self,
        plan: &Plan,
        test: &str,
        id: &str,
    ) -> (usize, Vec<&'s TestOutcome>) {
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

/// One test, judged from the evidence alone.
pub(super) fn judged(plan: &Plan, evidence: &Evidence, test: &str) -> JudgedTest {
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
