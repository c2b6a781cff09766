//! What a judgement's catches come to: per step of the worksheet the mutants
//! caught and missed, the score the course's weights make of them, and the kind
//! of observation by which fencelab's own suite kills each missed mutant.

use std::collections::{BTreeMap, BTreeSet};

use super::{Options, Plan};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Request, Scenario, ScenarioKind, Tests};
use crate::error::Error;
use crate::judging::report::{MissedMutant, StepThoroughness};
use crate::lab::mutant::Mutant;
use crate::lab::observation::ObservationKind;
use crate::lab::suite::{self, SuiteFiles};
use crate::lab::worksheet::SLUGS;

/// Per step of the worksheet, the mutants caught and those missed.
pub(super) fn thoroughness(
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
pub(super) fn score(steps: &[StepThoroughness], weights: &crate::lab::course::Weights) -> f64 {
    let shares = (steps.iter()).map(|s| (s.step, s.caught as f64 / s.total.max(1) as f64));
    (weights.mean(shares) * 100.0 * 100.0).round() / 100.0
}

/// For each mutant in `missed`, the kind of observation by which fencelab's
/// own suite kills it (its declared killers, run against it). The
/// implementations are the judgement's own, so that their server is already
/// built; only the judge is fencelab's.
pub(super) fn observations<'a>(
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
