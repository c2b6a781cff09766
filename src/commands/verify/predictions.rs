//! `verify --predictions`: the learner's predictions (written with `fencelab
//! predict`) scored against what the run found. The form and its reading are
//! `predict`'s; the scoring is verify's, since it needs the run. The score is
//! out of the mutants the form holds (by default the worksheet's eight
//! fragments), never out of mutants it does not name; a mutant no test killed
//! is shown and not scored.
//!
//! A killed mutant is worth two points: one for the observation (a kind of
//! observation one of its killers made), one for the tests, scored against
//! its whole kill set by precision (how many of the tests named did kill it)
//! and recall (how many of its killers were named), as their harmonic mean:
//! naming every test of the suite scores next to nothing, and a test that
//! does not kill it costs as much as a killer left out.

use serde::Serialize;

use super::MutantReport;
use crate::engine::outcome::MutantOutcome;
use crate::lab::observation::ObservationKind;
use crate::lab::predictions::Prediction;

/// Some of a mutant's killers, by what they saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Happened {
    /// What they observed; `None` for kills that were no observation (a
    /// crash, a time limit, a failure without the suite's message).
    pub observation: Option<ObservationKind>,
    /// How those tests ended when they observed nothing: `panicked` (the
    /// implementation did), `crashed`, `timeout`, else `failed`.
    pub outcome: Option<&'static str>,
    pub tests: Vec<String>,
}

/// A prediction next to what happened.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub mutant: String,
    pub step: u32,
    /// The mutant's outcome in the run; one that no test killed is shown,
    /// and not scored (`max_points` 0).
    pub outcome: MutantOutcome,
    pub predicted_observation: Option<ObservationKind>,
    pub predicted_tests: Vec<String>,
    /// Its killers grouped by what they observed, in the order of the kinds.
    pub(crate) happened: Vec<Happened>,
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
    /// 2; 1 when no killer made an observation (only the tests are scored);
    /// 0 when no test killed it.
    pub max_points: f64,
}

/// All predictions of a run, scored.
#[derive(Debug, Clone, Serialize)]
pub struct Scorecard {
    /// Every mutant of the form that the run covered, in the run's order.
    pub mutants: Vec<Scored>,
    /// How many of them are scored (some test killed them).
    pub scored: usize,
    pub points: f64,
    pub max_points: f64,
}

fn hundredths(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Precision, recall and their harmonic mean for `named` against `killers`.
pub(crate) fn tests_score(named: &[String], killers: &[String]) -> (Option<f64>, f64, f64) {
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

/// Scores `predictions` against the mutants a run reported: every mutant the
/// form holds and the run covered, and no other.
pub fn score(predictions: &[Prediction], reported: &[MutantReport]) -> Scorecard {
    let mut mutants = Vec::new();
    for m in reported {
        let Some(prediction) = predictions.iter().find(|p| p.mutant == m.id) else {
            continue;
        };
        let mut happened: Vec<Happened> = Vec::new();
        for kill in &m.killed_by {
            let observation = ObservationKind::of_failure(&kill.message);
            // fencelab's own words for a panic in the implementation.
            let panicked = crate::bridge::said::all(&kill.marked)
                .iter()
                .any(|s| matches!(s, crate::bridge::said::Said::FailedInCall { .. }));
            let outcome =
                observation
                    .is_none()
                    .then_some(if panicked { "panicked" } else { kill.outcome });
            match happened
                .iter_mut()
                .find(|h| h.observation == observation && h.outcome == outcome)
            {
                Some(h) => h.tests.push(kill.test.clone()),
                None => happened.push(Happened {
                    observation,
                    outcome,
                    tests: vec![kill.test.clone()],
                }),
            }
        }
        // The kinds in the form's order, then kills that observed nothing.
        happened.sort_by_key(|h| (h.observation.is_none(), h.observation, h.outcome));
        let observations: Vec<ObservationKind> =
            happened.iter().filter_map(|h| h.observation).collect();
        let killers: Vec<String> = m.killed_by.iter().map(|k| k.test.clone()).collect();
        let (precision, recall, f1) = tests_score(&prediction.tests, &killers);
        let max_points = match (killers.is_empty(), observations.is_empty()) {
            (true, _) => 0.0,
            (false, true) => 1.0,
            (false, false) => 2.0,
        };
        let seen = f64::from(u8::from(
            prediction
                .observation
                .is_some_and(|o| observations.contains(&o)),
        ));
        mutants.push(Scored {
            mutant: m.id.clone(),
            step: m.step,
            outcome: m.outcome,
            predicted_observation: prediction.observation,
            predicted_tests: prediction.tests.clone(),
            happened,
            observations,
            killers,
            precision: precision.map(hundredths),
            recall: hundredths(recall),
            points: hundredths(seen + f1),
            max_points,
        });
    }
    let points = hundredths(mutants.iter().map(|s| s.points).sum());
    let max_points = mutants.iter().map(|s| s.max_points).sum();
    Scorecard {
        scored: mutants.iter().filter(|s| s.max_points > 0.0).count(),
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

    /// A mutant's report with these kills: (test, outcome, message).
    fn reported(id: &str, kills: &[(&str, &'static str, &str)]) -> MutantReport {
        let killed_by: Vec<super::super::Kill> = kills
            .iter()
            .map(|(test, outcome, message)| super::super::Kill {
                test: test.to_string(),
                outcome,
                message: crate::engine::outcome::english(message),
                marked: message.to_string(),
                observation: None,
            })
            .collect();
        let outcome = match kills.first() {
            None => MutantOutcome::Survived,
            Some((_, "crashed", _)) => MutantOutcome::Crashed,
            Some(_) => MutantOutcome::Killed,
        };
        MutantReport {
            id: id.into(),
            step: 4,
            title: id.into(),
            titles: crate::lab::lang::Text {
                ja: id.into(),
                en: id.into(),
            },
            path: format!("mutants/{id}.toml"),
            outcome,
            as_declared: true,
            equivalent: None,
            killed_by,
            killers: Vec::new(),
            survivors: Vec::new(),
            missing_killers: Vec::new(),
            failed_survivors: Vec::new(),
            diff: String::new(),
            detail: None,
            tests: Default::default(),
            secs: 0.0,
        }
    }

    fn predict(mutant: &str, observation: Option<ObservationKind>, tests: &[&str]) -> Prediction {
        Prediction {
            mutant: mutant.into(),
            observation,
            tests: names(tests),
        }
    }

    const RETURNED: &str =
        "observation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)";
    const STORED: &str = "observation: rows after the claim\nexpected: [a]\nactual: [b]";

    #[test]
    fn only_the_forms_mutants_are_scored_and_each_says_what_happened() {
        let panicked = crate::bridge::said::Said::FailedInCall {
            call: "claim".into(),
            at: None,
            panicked: true,
        }
        .marked();
        let run = vec![
            reported(
                "a",
                &[
                    ("t1", "failed", RETURNED),
                    ("t2", "failed", STORED),
                    ("t3", "failed", RETURNED),
                ],
            ),
            reported("b", &[("t1", "failed", RETURNED)]),
            reported(
                "crash",
                &[
                    ("t4", "crashed", "the implementation's process was killed"),
                    ("t5", "failed", &panicked),
                ],
            ),
            reported("survivor", &[]),
        ];
        let form = vec![
            predict("a", Some(ObservationKind::State), &["t1", "t2", "t3"]),
            predict("crash", None, &["t4", "t5"]),
            predict("survivor", Some(ObservationKind::Error), &[]),
        ];
        let card = score(&form, &run);
        let ids: Vec<&str> = card.mutants.iter().map(|s| s.mutant.as_str()).collect();
        assert_eq!(ids, ["a", "crash", "survivor"], "b is not in the form");
        let a = &card.mutants[0];
        assert_eq!(
            a.happened,
            vec![
                Happened {
                    observation: Some(ObservationKind::ReturnValue),
                    outcome: None,
                    tests: names(&["t1", "t3"]),
                },
                Happened {
                    observation: Some(ObservationKind::State),
                    outcome: None,
                    tests: names(&["t2"]),
                },
            ]
        );
        assert_eq!((a.points, a.max_points), (2.0, 2.0));
        // A kill that observed nothing is still said, and only the tests count.
        let crash = &card.mutants[1];
        let outcomes: Vec<_> = crash
            .happened
            .iter()
            .map(|h| (h.observation, h.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [(None, Some("crashed")), (None, Some("panicked"))]
        );
        assert_eq!((crash.points, crash.max_points), (1.0, 1.0));
        // A mutant no test killed is shown, and not scored.
        assert_eq!(card.mutants[2].max_points, 0.0);
        assert!(card.mutants[2].happened.is_empty());
        assert_eq!((card.scored, card.points, card.max_points), (2, 3.0, 3.0));
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
