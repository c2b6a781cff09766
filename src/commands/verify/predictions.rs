//! `verify --predictions`: the learner's predictions (written with `fencelab
//! predict`) scored against what the run found. The form and its reading are
//! `predict`'s; the scoring is verify's, since it needs the run.
//!
//! A killed mutant is worth two points: one for the observation (a kind of
//! observation one of its killers made), one for the tests, scored against
//! its whole kill set by precision (how many of the tests named did kill it)
//! and recall (how many of its killers were named), as their harmonic mean:
//! naming every test of the suite scores next to nothing, and a test that
//! does not kill it costs as much as a killer left out.

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
    /// The share of the tests named that killed it (`None` when none was named).
    pub precision: Option<f64>,
    /// The share of its killers that were named.
    pub recall: f64,
    /// One point for the observation, up to one for the tests (the harmonic
    /// mean of precision and recall), to 1/100.
    pub points: f64,
    pub max_points: f64,
}

/// All predictions of a run, scored.
#[derive(Debug, Clone, Serialize)]
pub struct Scorecard {
    pub mutants: Vec<Scored>,
    pub points: f64,
    pub max_points: f64,
}

fn hundredths(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Precision, recall and their harmonic mean for `named` against `killers`.
pub fn tests_score(named: &[String], killers: &[String]) -> (Option<f64>, f64, f64) {
    let mut unique: Vec<&String> = named.iter().collect();
    unique.sort();
    unique.dedup();
    let right = unique.iter().filter(|t| killers.contains(t)).count() as f64;
    let precision = (!unique.is_empty()).then(|| right / unique.len() as f64);
    let recall = if killers.is_empty() {
        0.0
    } else {
        right / killers.len() as f64
    };
    let f1 = match precision {
        Some(p) if p + recall > 0.0 => 2.0 * p * recall / (p + recall),
        _ => 0.0,
    };
    (precision, recall, f1)
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
        let (precision, recall, f1) = tests_score(&tests, &killers);
        let seen = f64::from(u8::from(
            observation.is_some_and(|o| observations.contains(&o)),
        ));
        mutants.push(Scored {
            mutant: m.id.clone(),
            step: m.step,
            predicted_observation: observation,
            predicted_tests: tests,
            observations,
            killers,
            precision: precision.map(hundredths),
            recall: hundredths(recall),
            points: hundredths(seen + f1),
            max_points: 2.0,
        });
    }
    let points = hundredths(mutants.iter().map(|s| s.points).sum());
    let max_points = mutants.iter().map(|s| s.max_points).sum();
    Scorecard {
        mutants,
        points,
        max_points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn naming_every_test_scores_next_to_nothing_and_a_wrong_test_costs() {
        let killers = names(&["a", "b"]);
        let every: Vec<String> = (0..94)
            .map(|i| format!("t{i}"))
            .chain(killers.clone())
            .collect();
        let (_, recall, f1) = tests_score(&every, &killers);
        assert_eq!(recall, 1.0);
        assert!(f1 < 0.05, "{f1}");
        assert_eq!(tests_score(&killers, &killers), (Some(1.0), 1.0, 1.0));
        let (_, _, one) = tests_score(&names(&["a"]), &killers);
        let (_, _, one_and_wrong) = tests_score(&names(&["a", "z"]), &killers);
        assert!(one_and_wrong < one, "{one_and_wrong} < {one}");
        assert_eq!(tests_score(&[], &killers), (None, 0.0, 0.0));
        assert_eq!(tests_score(&names(&["a", "a"]), &killers).0, Some(1.0));
    }
}
