//! Points per test that add up exactly to a submission's score, for the
//! formats that show per-test points (GitHub Classroom, Gradescope,
//! PrairieLearn, the CSV gradebook's steps).
//!
//! Each step weighs the same and its tests share its weight, so a test of a
//! step with n tests is worth `total / steps / n`, rarely a round number. The
//! score shown is rounded to 1/100 of a point; the points earned are that
//! score in hundredths, shared among the tests that passed by largest
//! remainder (each gets its exact share rounded down or up), so they add up
//! to it exactly as integers. Readers add them up as binary floats, in order
//! (`acc += score`, as GitHub Classroom's reporter does), where 0.01 is not
//! exact: the last passed test's value is nudged, if need be, so that the
//! float sum in order is the float of the score too.

use crate::commands::grade::SubmissionReport;

/// A test's points: what it is worth (rounded to 1/10000, for display) and
/// what it earned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestPoints {
    pub max: f64,
    pub earned: f64,
}

/// The score of `submission` out of `total`, exactly as its reports show it
/// (`total` 100 gives the report's `score`).
pub fn score(submission: &SubmissionReport, total: f64) -> f64 {
    units(submission, total) as f64 / 100.0
}

/// The score in hundredths of a point, rounded as `grade` rounds it.
fn units(submission: &SubmissionReport, total: f64) -> i64 {
    if submission.not_graded().is_some() || submission.steps.is_empty() {
        return 0;
    }
    let fraction =
        submission.steps.iter().map(|s| s.score).sum::<f64>() / submission.steps.len() as f64;
    (fraction * total * 100.0).round() as i64
}

/// Shares `units` among `weights` (numerator, denominator) in proportion,
/// each getting its exact share rounded down or up, by largest remainder
/// (ties in order); `units` must lie between the sums of the floors and of
/// the ceilings.
fn share(units: i64, weights: &[(i64, i64)]) -> Vec<i64> {
    let mut out: Vec<i64> = weights.iter().map(|(n, d)| n / d.max(&1)).collect();
    let mut missing = units - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..weights.len())
        .filter(|i| weights[*i].0 % weights[*i].1.max(1) != 0)
        .collect();
    // Compare remainders r/d as fractions, exactly.
    let rem = |i: usize| (weights[i].0 % weights[i].1.max(1), weights[i].1.max(1));
    order.sort_by(|a, b| {
        let ((ra, da), (rb, db)) = (rem(*a), rem(*b));
        (rb * da).cmp(&(ra * db)).then(a.cmp(b))
    });
    for i in order {
        if missing <= 0 {
            break;
        }
        out[i] += 1;
        missing -= 1;
    }
    out
}

/// Per test of `submission` (in its `tests` order), out of `total` points.
///
/// The score (in hundredths) is shared among the steps by what each earned
/// exactly, then each step's share among its passed tests, so that a step
/// whose tests all pass gets exactly its weight.
pub fn per_test(submission: &SubmissionReport, total: f64) -> Vec<TestPoints> {
    let steps = submission.steps.len().max(1) as i64;
    let total_units = (total * 100.0).round() as i64;
    let in_step = |step: u32| {
        submission
            .steps
            .iter()
            .find(|s| s.step == step)
            .map_or(1, |s| s.total.max(1)) as i64
    };
    // A step's exact earnings in hundredths: total_units * passed / (steps * n).
    let step_weights: Vec<(i64, i64)> = submission
        .steps
        .iter()
        .map(|s| (total_units * s.passed as i64, steps * s.total.max(1) as i64))
        .collect();
    let step_units = share(units(submission, total), &step_weights);
    let mut earned = vec![0i64; submission.tests.len()];
    for (s, units) in submission.steps.iter().zip(&step_units) {
        let passed: Vec<usize> = (0..submission.tests.len())
            .filter(|i| {
                submission.tests[*i].step == s.step && submission.tests[*i].outcome.passed()
            })
            .collect();
        let weights = vec![(total_units, steps * s.total.max(1) as i64); passed.len()];
        for (i, u) in passed.iter().zip(share(*units, &weights)) {
            earned[*i] = u;
        }
    }
    let target = units(submission, total);
    let mut points: Vec<TestPoints> = submission
        .tests
        .iter()
        .zip(&earned)
        .map(|(t, units)| TestPoints {
            max: (total / steps as f64 / in_step(t.step) as f64 * 10_000.0).round() / 10_000.0,
            earned: *units as f64 / 100.0,
        })
        .collect();
    exact_float_sum(&mut points, target as f64 / 100.0);
    points
}

/// Nudges the last earning test so that adding the points up in order, in
/// binary floats, gives `target` exactly.
fn exact_float_sum(points: &mut [TestPoints], target: f64) {
    let Some(last) = points.iter().rposition(|p| p.earned > 0.0) else {
        return;
    };
    for _ in 0..8 {
        let sum = points.iter().fold(0.0, |acc, p| acc + p.earned);
        if sum == target {
            return;
        }
        let before: f64 = points[..last].iter().fold(0.0, |acc, p| acc + p.earned);
        let wanted = target - before;
        points[last].earned = if wanted == points[last].earned {
            if sum < target {
                wanted.next_up()
            } else {
                wanted.next_down()
            }
        } else {
            wanted
        };
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::commands::grade::{GradedTest, StepScore, SubmissionReport};
    use crate::engine::outcome::{FailureKind, TestOutcome};

    /// A submission with `sizes[i]` tests in step i+1, the first `passed[i]`
    /// of them passing.
    pub(crate) fn submission(sizes: &[usize], passed: &[usize]) -> SubmissionReport {
        let mut tests = Vec::new();
        let mut steps = Vec::new();
        for (i, (&n, &p)) in sizes.iter().zip(passed).enumerate() {
            let step = i as u32 + 1;
            for t in 0..n {
                tests.push(GradedTest {
                    test: format!("step{step}::test_{t}"),
                    step,
                    outcome: if t < p {
                        TestOutcome::Passed
                    } else {
                        TestOutcome::Failed {
                            kind: FailureKind::Assertion,
                            message: format!(
                                "panicked at tests/behaviour/step{step}.rs:{}:5:\nobservation: x\nexpected: 1\nactual: 2",
                                10 + t
                            ),
                        }
                    },
                    secs: 0.01,
                });
            }
            steps.push(StepScore {
                step,
                slug: crate::lab::worksheet::SLUGS[i],
                passed: p,
                total: n,
                score: p as f64 / n as f64,
            });
        }
        let exact = steps.iter().map(|s| s.score).sum::<f64>() / steps.len() as f64;
        SubmissionReport {
            name: "alice.rs".into(),
            file: "subs/alice.rs".into(),
            score: (exact * 100.0 * 100.0).round() / 100.0,
            passed_gate: true,
            compile_errors: None,
            unusable: None,
            invalid_tests: None,
            steps,
            tests,
        }
    }

    #[test]
    fn points_add_up_exactly_in_float_in_order() {
        let sizes = [9, 10, 11, 13, 12, 9, 11, 19];
        // Every pass pattern of a few shapes, and the real suite's sizes.
        for passed in [
            [9, 10, 11, 13, 12, 9, 11, 19],
            [0, 0, 0, 0, 0, 0, 0, 0],
            [1, 1, 1, 1, 1, 1, 1, 1],
            [8, 3, 10, 12, 1, 2, 7, 18],
            [9, 10, 0, 13, 12, 9, 11, 0],
            [3, 7, 5, 1, 11, 4, 2, 13],
        ] {
            let s = submission(&sizes, &passed);
            let points = per_test(&s, 100.0);
            let sum = points.iter().fold(0.0, |acc, p| acc + p.earned);
            assert_eq!(sum, s.score, "{passed:?}");
            // A step whose tests all pass earns exactly its weight.
            for (i, (&n, &p)) in sizes.iter().zip(&passed).enumerate() {
                let step: f64 = points
                    .iter()
                    .zip(&s.tests)
                    .filter(|(_, t)| t.step == i as u32 + 1)
                    .map(|(p, _)| p.earned)
                    .sum();
                if n == p {
                    assert!((step - 12.5).abs() < 1e-9, "step {} earns {step}", i + 1);
                }
            }
            for (p, t) in points.iter().zip(&s.tests) {
                if !t.outcome.passed() {
                    assert_eq!(p.earned, 0.0);
                }
                assert!((p.earned - if t.outcome.passed() { p.max } else { 0.0 }).abs() < 0.011);
            }
        }
    }

    #[test]
    fn points_out_of_another_total_add_up_too() {
        let s = submission(&[3, 3, 3, 3, 3, 3, 3, 3], &[1, 2, 1, 2, 1, 2, 1, 2]);
        let points = per_test(&s, 20.0);
        let sum = points.iter().fold(0.0, |acc, p| acc + p.earned);
        assert_eq!(sum, score(&s, 20.0));
        assert_eq!(score(&s, 20.0), 10.0);
        assert_eq!(score(&s, 100.0), s.score);
    }

    #[test]
    fn a_submission_that_does_not_compile_earns_nothing() {
        let mut s = submission(&[2; 8], &[2; 8]);
        s.compile_errors = Some("error".into());
        assert_eq!(score(&s, 100.0), 0.0);
    }
}
