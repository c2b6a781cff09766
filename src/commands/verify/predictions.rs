//! `verify --predictions`: the learner's predictions (written with `fencelab
//! predict`) scored against what the run found. The form and its reading are
//! `predict`'s; the scoring is verify's, since it needs the run.

use serde::Serialize;

use super::Report;
use crate::commands::predict::{ObservationKind, Prediction};

/// A prediction next to what happened.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub mutant: String,
    pub step: u32,
    pub predicted_observation: Option<ObservationKind>,
    pub predicted_tests: Vec<String>,
    /// The kinds of observation of the tests that killed it.
    pub observations: Vec<ObservationKind>,
    /// The tests that killed it.
    pub killers: Vec<String>,
    /// One point for the observation, one for naming a test that killed it.
    pub points: u32,
    pub max_points: u32,
}

/// All predictions of a run, scored.
#[derive(Debug, Clone, Serialize)]
pub struct Scorecard {
    pub mutants: Vec<Scored>,
    pub points: u32,
    pub max_points: u32,
}

/// Scores `predictions` against the mutants of `report` that were killed.
pub fn score(predictions: &[Prediction], report: &Report) -> Scorecard {
    let mut mutants = Vec::new();
    for m in report.mutants.iter().filter(|m| !m.killed_by.is_empty()) {
        let prediction = predictions.iter().find(|p| p.mutant == m.id);
        let mut observations: Vec<ObservationKind> = m
            .killed_by
            .iter()
            .filter_map(|k| ObservationKind::of_failure(&k.message))
            .collect();
        observations.sort();
        observations.dedup();
        let killers: Vec<String> = m.killed_by.iter().map(|k| k.test.clone()).collect();
        let (observation, tests) =
            prediction.map_or((None, Vec::new()), |p| (p.observation, p.tests.clone()));
        let points = u32::from(observation.is_some_and(|o| observations.contains(&o)))
            + u32::from(tests.iter().any(|t| killers.contains(t)));
        mutants.push(Scored {
            mutant: m.id.clone(),
            step: m.step,
            predicted_observation: observation,
            predicted_tests: tests,
            observations,
            killers,
            points,
            max_points: 2,
        });
    }
    let points = mutants.iter().map(|s| s.points).sum();
    let max_points = mutants.iter().map(|s| s.max_points).sum();
    Scorecard {
        mutants,
        points,
        max_points,
    }
}
