//! Points per test and per step that add up exactly to a submission's score.
//! The formats that show them are GitHub Classroom's, Gradescope's,
//! PrairieLearn's and the CSV gradebook's steps.
//!
//! Everything is counted in integer hundredths of a point, the precision every
//! report shows, so that what a reader adds up is what it sees. Three things
//! hold for every submission (`of` says how):
//!
//! - the maxima add up to `total` exactly;
//! - the score is the step-weighted share of tests passed, rounded to the
//!   hundredth (as `grade` reports it), and the points earned add up to it;
//! - a test that passed earns its maximum, one that did not earns 0, so no
//!   test earns more than its maximum.

use std::cmp::Ordering;
use std::fmt;

use crate::commands::grade::SubmissionReport;

/// Points in hundredths of a point, as every report shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Hundredths(pub i64);

impl Hundredths {
    /// As a number of points (the nearest `f64` to the decimal, so that
    /// JSON shows it with at most two decimals).
    pub(crate) fn points(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

impl fmt::Display for Hundredths {
    /// `12.50`, `0.00`: two decimals, and never `-0.00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let n = self.0.unsigned_abs();
        f.pad(&format!("{sign}{}.{:02}", n / 100, n % 100))
    }
}

/// A test's points: what it is worth and what it earned (all of it, or 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TestPoints {
    pub max: Hundredths,
    pub earned: Hundredths,
}

/// A step's points: its weight and what its passed tests earned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepPoints {
    pub step: u32,
    pub max: Hundredths,
    pub earned: Hundredths,
}

/// A submission's points out of `max`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Points {
    pub max: Hundredths,
    pub score: Hundredths,
    /// In the order of the submission's `steps`.
    pub steps: Vec<StepPoints>,
    /// In the order of the submission's `tests`.
    pub tests: Vec<TestPoints>,
}

impl Points {
    /// The points of step `step` (0 for a step the submission does not have).
    pub(crate) fn step(&self, step: u32) -> StepPoints {
        self.steps
            .iter()
            .find(|s| s.step == step)
            .copied()
            .unwrap_or(StepPoints {
                step,
                max: Hundredths(0),
                earned: Hundredths(0),
            })
    }
}

/// The score out of 100 as every report writes it (`41.67`, `0.00`).
pub(crate) fn score_shown(submission: &SubmissionReport) -> Hundredths {
    Hundredths(units(submission, 100.0))
}

/// The score in hundredths of a point, rounded as `grade` rounds it.
fn units(submission: &SubmissionReport, total: f64) -> i64 {
    if submission.not_graded().is_some() || submission.steps.is_empty() {
        return 0;
    }
    let fraction = weighted(&submission.steps);
    (fraction * total * 100.0).round() as i64
}

/// The steps' scores, each counted by its weight (the course file's), 0 to 1.
pub(crate) fn weighted(steps: &[crate::commands::grade::StepScore]) -> f64 {
    let (mut sum, mut weight) = (0.0, 0.0);
    for s in steps {
        sum += s.weight * s.score;
        weight += s.weight;
    }
    if weight > 0.0 { sum / weight } else { 0.0 }
}

/// A step's weight in thousandths, as the course file gives it, so that
/// shares are exact fractions.
fn milli(weight: f64) -> i64 {
    (weight * 1000.0).round() as i64
}

/// An exact share as a fraction `numerator / denominator` (denominator > 0).
type Exact = (i64, i64);

/// The fractional part of `exact`, compared exactly.
fn remainder_cmp(a: Exact, b: Exact) -> Ordering {
    let rem = |(n, d): Exact| (i128::from(n.rem_euclid(d)), i128::from(d));
    let ((ra, da), (rb, db)) = (rem(a), rem(b));
    (ra * db).cmp(&(rb * da))
}

/// Shares `target` among items in proportion to their `exact` shares, each
/// kept within its `bounds` (inclusive): each starts at its exact share
/// rounded down, then the hundredths missing go one each to the largest
/// remainders first (ties in order), or those in excess come from the
/// smallest. Whenever `target` lies between the sums of the shares rounded
/// down and up, each item gets its share rounded down or up; whenever it
/// lies between the sums of the bounds, the result adds up to it.
fn share(target: i64, exact: &[Exact], bounds: &[(i64, i64)]) -> Vec<i64> {
    let mut out: Vec<i64> = exact
        .iter()
        .zip(bounds)
        .map(|((n, d), (lo, hi))| n.div_euclid(*d).clamp(*lo, *hi))
        .collect();
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|a, b| remainder_cmp(exact[*b], exact[*a]).then(a.cmp(b)));
    let mut missing = target - out.iter().sum::<i64>();
    while missing != 0 {
        let before = missing;
        if missing > 0 {
            for &i in &order {
                if missing > 0 && out[i] < bounds[i].1 {
                    out[i] += 1;
                    missing -= 1;
                }
            }
        } else {
            for &i in order.iter().rev() {
                if missing < 0 && out[i] > bounds[i].0 {
                    out[i] -= 1;
                    missing += 1;
                }
            }
        }
        if missing == before {
            debug_assert!(false, "{target} cannot be shared within {bounds:?}");
            break;
        }
    }
    out
}

/// `amount` shared equally among `n` items (the first ones get the
/// hundredths left over); nothing to share among none (a submission not
/// graded has no tests).
fn equally(amount: i64, n: usize) -> Vec<i64> {
    if n == 0 {
        return Vec::new();
    }
    share(
        amount,
        &vec![(amount, n.max(1) as i64); n],
        &vec![(0, amount); n],
    )
}

/// The points of `submission` out of `total` points, per step and per test.
///
/// Each step weighs its share of `total` (the course file's weights), and its
/// tests share that weight. Neither is a round number in general (12.5 / 8 =
/// 1.5625), so maxima are rounded by largest remainder. The hundredths a
/// rounding leaves over go where the score needs them. Each step's weight is
/// split into what its passed tests earned and what its failed tests did not.
/// The first part is its exact share, rounded down or up so that the steps add
/// up to the score. Each part is shared equally among its tests. So a test's
/// maximum is within a hundredth or two of its exact weight, and may differ by
/// a hundredth between two submissions. A step whose tests all pass earns
/// exactly its weight.
pub(crate) fn of(submission: &SubmissionReport, total: f64) -> Points {
    let total_units = (total * 100.0).round() as i64;
    let graded = submission.not_graded().is_none();
    // (passed, tests) of each step; a submission not graded passed nothing.
    let tally: Vec<(i64, i64)> = submission
        .steps
        .iter()
        .map(|s| {
            let n = s.total.max(1) as i64;
            (if graded { (s.passed as i64).min(n) } else { 0 }, n)
        })
        .collect();
    let score = units(submission, total);
    let milli: Vec<i64> = submission.steps.iter().map(|s| milli(s.weight)).collect();
    let all = milli.iter().sum::<i64>().max(1);
    let weights = step_weights(total_units, score, &tally, &milli);
    // What each step's passed tests earned: a full step its weight, an empty
    // one nothing, the others their exact share (total * weight * passed /
    // (weights * n)) rounded so that the steps add up to the score.
    let exact: Vec<Exact> = tally
        .iter()
        .zip(&milli)
        .map(|((p, n), m)| (total_units * m * p, all * n))
        .collect();
    let bounds: Vec<(i64, i64)> = tally
        .iter()
        .zip(&weights)
        .map(|((p, n), w)| match *p {
            0 => (0, 0),
            p if p == *n => (*w, *w),
            _ => (0, *w),
        })
        .collect();
    let earned = share(score, &exact, &bounds);
    // Each step's parts shared among its tests.
    let mut tests = vec![
        TestPoints {
            max: Hundredths(0),
            earned: Hundredths(0),
        };
        submission.tests.len()
    ];
    // A step's random test that does not count gets no points either way.
    let outcomes: Vec<(&str, u32, bool)> = (submission.tests.iter())
        .map(|t| (t.test.as_str(), t.step, graded && t.outcome.passed()))
        .collect();
    let uncounted = crate::engine::outcome::uncounted(&outcomes);
    for ((s, weight), earned) in submission.steps.iter().zip(&weights).zip(&earned) {
        let (passed, failed): (Vec<usize>, Vec<usize>) = (0..submission.tests.len())
            .filter(|i| submission.tests[*i].step == s.step)
            .filter(|i| !uncounted.contains(&submission.tests[*i].test.as_str()))
            .partition(|i| graded && submission.tests[*i].outcome.passed());
        for (i, u) in passed.iter().zip(equally(*earned, passed.len())) {
            tests[*i] = TestPoints {
                max: Hundredths(u),
                earned: Hundredths(u),
            };
        }
        for (i, u) in failed.iter().zip(equally(weight - earned, failed.len())) {
            tests[*i] = TestPoints {
                max: Hundredths(u),
                earned: Hundredths(0),
            };
        }
    }
    Points {
        max: Hundredths(total_units),
        score: Hundredths(score),
        steps: submission
            .steps
            .iter()
            .zip(weights.iter().zip(&earned))
            .map(|(s, (w, e))| StepPoints {
                step: s.step,
                max: Hundredths(*w),
                earned: Hundredths(*e),
            })
            .collect(),
        tests,
    }
}

/// Each step's weight in hundredths: its exact share of `total` rounded
/// down, and where that leaves hundredths over, one more for some steps with
/// a remainder, chosen so that `score` can be shared with a full step earning
/// its whole weight and an empty one nothing: first the steps partly passed,
/// then as many full steps as the score allows, then the empty ones.
fn step_weights(total: i64, score: i64, tally: &[(i64, i64)], milli: &[i64]) -> Vec<i64> {
    let all = milli.iter().sum::<i64>().max(1);
    let mut weights: Vec<i64> = milli.iter().map(|m| total * m / all).collect();
    let remainder: Vec<bool> = milli.iter().map(|m| total * m % all != 0).collect();
    let mut extra = total - weights.iter().sum::<i64>();
    let full = |(p, n): &(i64, i64)| p == n;
    let empty = |(p, _): &(i64, i64)| *p == 0;
    let full_weights: i64 = (tally.iter().zip(&weights))
        .filter(|(t, _)| full(t))
        .map(|(_, w)| w)
        .sum();
    let mut give = |pick: &dyn Fn(&(i64, i64)) -> bool, most: i64, weights: &mut [i64]| {
        let mut given = 0;
        for ((w, t), r) in weights.iter_mut().zip(tally).zip(&remainder) {
            if given < most && extra > 0 && *r && pick(t) {
                *w += 1;
                given += 1;
                extra -= 1;
            }
        }
    };
    give(&|t| !full(t) && !empty(t), i64::MAX, &mut weights);
    give(&full, (score - full_weights).max(0), &mut weights);
    give(&empty, i64::MAX, &mut weights);
    weights
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The score of `submission` out of `total`, exactly as its reports show
    /// it (`total` 100 gives the report's `score`).
    fn score(submission: &SubmissionReport, total: f64) -> f64 {
        Hundredths(units(submission, total)).points()
    }
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
                weight: 1.0,
            });
        }
        let exact = weighted(&steps);
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
            learner_tests: Vec::new(),
        }
    }

    /// What every submission's points must satisfy, out of `total`.
    pub(crate) fn check_points(s: &SubmissionReport, total: f64) {
        let points = of(s, total);
        let total_units = (total * 100.0).round() as i64;
        let what = format!(
            "{:?} of {total}",
            s.steps
                .iter()
                .map(|st| (st.passed, st.total))
                .collect::<Vec<_>>()
        );
        assert_eq!(points.score.0, units(s, total), "{what}");
        assert_eq!(points.score.points(), score(s, total), "{what}");
        let max: i64 = points.tests.iter().map(|t| t.max.0).sum();
        let earned: i64 = points.tests.iter().map(|t| t.earned.0).sum();
        if !s.tests.is_empty() {
            assert_eq!(max, total_units, "the maxima add up to the total: {what}");
        }
        assert_eq!(
            earned, points.score.0,
            "the points add up to the score: {what}"
        );
        let steps_max: i64 = points.steps.iter().map(|st| st.max.0).sum();
        assert_eq!(steps_max, total_units, "{what}");
        let steps_earned: i64 = points.steps.iter().map(|st| st.earned.0).sum();
        assert_eq!(steps_earned, points.score.0, "{what}");
        let all: f64 = s.steps.iter().map(|st| st.weight).sum();
        for (st, p) in s.steps.iter().zip(&points.steps) {
            assert!(p.earned <= p.max && p.earned.0 >= 0, "{what}");
            if st.passed == st.total && s.not_graded().is_none() {
                assert_eq!(p.earned, p.max, "a full step earns its weight: {what}");
            }
            let exact = total * 100.0 * st.weight / all;
            assert!((p.max.0 as f64 - exact).abs() < 1.0, "{what}");
            let of_step: i64 = points
                .tests
                .iter()
                .zip(&s.tests)
                .filter(|(_, t)| t.step == st.step)
                .map(|(p, _)| p.max.0)
                .sum();
            assert_eq!(of_step, p.max.0, "{what}");
        }
        for (p, t) in points.tests.iter().zip(&s.tests) {
            let st = s.steps.iter().find(|st| st.step == t.step).unwrap();
            let exact = total * 100.0 * st.weight / all / st.total as f64;
            assert!(
                (p.max.0 as f64 - exact).abs() < 2.0,
                "{} is worth {} of {exact}: {what}",
                t.test,
                p.max.0
            );
            let wanted = if t.outcome.passed() && s.not_graded().is_none() {
                p.max
            } else {
                Hundredths(0)
            };
            assert_eq!(p.earned, wanted, "{what}");
        }
    }

    /// The suite's step sizes.
    const SUITE: [usize; 8] = [8, 6, 7, 25, 16, 12, 11, 9];

    #[test]
    fn no_test_earns_more_than_its_maximum_and_the_maxima_add_up_to_100() {
        for passed in [
            SUITE,
            [0; 8],
            [1; 8],
            [7, 5, 6, 24, 15, 11, 10, 8],
            [8, 6, 0, 25, 16, 12, 11, 0],
            [3, 1, 5, 1, 11, 4, 2, 7],
        ] {
            let s = submission(&SUITE, &passed);
            check_points(&s, 100.0);
        }
        // Step 1's 8 tests are worth 12.5 / 8 = 1.5625 each: no test shows
        // more than it is worth (1.57 of 1.5625 was shown), and the maxima
        // add up to 100.00, not 100.0014.
        let points = of(&submission(&SUITE, &SUITE), 100.0);
        let step1: Vec<i64> = points.tests[..8].iter().map(|t| t.max.0).collect();
        assert_eq!(step1, [157, 157, 156, 156, 156, 156, 156, 156]);
        assert!(points.tests.iter().all(|t| t.earned == t.max));
        assert_eq!(points.tests.iter().map(|t| t.max.0).sum::<i64>(), 10_000);
    }

    #[test]
    fn hundredths_show_two_decimals_and_never_minus_zero() {
        assert_eq!(Hundredths(0).to_string(), "0.00");
        assert_eq!(Hundredths(5).to_string(), "0.05");
        assert_eq!(Hundredths(1250).to_string(), "12.50");
        assert_eq!(Hundredths(10_000).to_string(), "100.00");
        assert_eq!(Hundredths(157).points(), 1.57);
        assert_eq!(format!("{:>7}", Hundredths(9659)), "  96.59");
    }

    #[test]
    fn a_step_that_does_not_divide_still_adds_up() {
        // 100 / 3 steps: 33.34 + 33.33 + 33.33, with the odd hundredth where
        // the score can take it (a full step 1 alone scores 33.33).
        for passed in [
            [3, 0, 0],
            [0, 3, 0],
            [3, 3, 0],
            [1, 2, 3],
            [0, 0, 0],
            [3, 3, 3],
        ] {
            check_points(&submission(&[3, 3, 3], &passed), 100.0);
        }
        check_points(&submission(&[7; 7], &[7, 0, 0, 0, 0, 0, 0]), 100.0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn points_never_exceed_their_maxima_and_add_up(
            steps in proptest::collection::vec((1usize..=30, 0.0f64..=1.0), 1..=8),
            total in proptest::sample::select(vec![100.0, 20.0, 10.0, 1.0, 37.5, 7.0]),
            broken in proptest::bool::weighted(0.1),
            weights in proptest::collection::vec(
                proptest::sample::select(vec![1.0, 1.0, 0.0, 2.0, 0.5, 3.25, 0.001, 1000.0, 7.125]),
                8,
            ),
        ) {
            let sizes: Vec<usize> = steps.iter().map(|(n, _)| *n).collect();
            let passed: Vec<usize> = steps
                .iter()
                .map(|(n, f)| ((*n as f64) * f).round() as usize)
                .collect();
            let mut s = submission(&sizes, &passed);
            // The course file's weights (at least one step weighs more than 0).
            if weights[..s.steps.len()].iter().any(|w| *w > 0.0) {
                for (st, w) in s.steps.iter_mut().zip(&weights) {
                    st.weight = *w;
                }
                s.score = (weighted(&s.steps) * 100.0 * 100.0).round() / 100.0;
            }
            if broken {
                s.compile_errors = Some("error".into());
                s.score = 0.0;
            }
            check_points(&s, total);
        }
    }

    /// `x` in hundredths, which it must be exactly (as JSON shows it: at most
    /// two decimals).
    pub(crate) fn cents(x: f64) -> i64 {
        let c = (x * 100.0).round();
        assert_eq!(c / 100.0, x, "{x} is not a number of hundredths");
        c as i64
    }

    /// Every format of `s` (one submission): its per-test (or per-step)
    /// points never exceed their maxima, the maxima add up to 100, the points
    /// to the score shown.
    fn check_formats(s: &SubmissionReport) {
        use crate::commands::grade::{classroom, csv, gradescope, prairielearn};
        let score = cents(s.score);
        let ours = of(s, 100.0);
        // Gradescope.
        let g = gradescope::results(s, &gradescope::Shown::all());
        assert_eq!(cents(g.score), score);
        for t in &g.tests {
            assert!(
                cents(t.score) <= cents(t.max_score),
                "{}: {} of {}",
                t.name,
                t.score,
                t.max_score
            );
            assert!(t.score >= 0.0 && t.score.is_sign_positive());
        }
        assert_eq!(
            g.tests.iter().map(|t| cents(t.max_score)).sum::<i64>(),
            10_000
        );
        assert_eq!(g.tests.iter().map(|t| cents(t.score)).sum::<i64>(), score);
        assert!(!g.output.contains("-0"), "{}", g.output);
        // PrairieLearn.
        let p = prairielearn::results(s);
        match p.score {
            Some(fraction) => {
                assert_eq!((fraction * 10_000.0).round() as i64, score);
                assert_eq!(fraction, score as f64 / 10_000.0);
                for t in &p.tests {
                    assert!(cents(t.points) <= cents(t.max_points), "{}", t.name);
                }
                assert_eq!(
                    p.tests.iter().map(|t| cents(t.max_points)).sum::<i64>(),
                    10_000
                );
                assert_eq!(p.tests.iter().map(|t| cents(t.points)).sum::<i64>(), score);
            }
            None => assert!(s.not_graded().is_some() && p.tests.is_empty()),
        }
        // Classroom: the reporter's sum, in floats in order, is the score;
        // each test shows (to the hundredth) at most its weight.
        let c = classroom::result(s);
        assert_eq!(c.max_score, 100.0);
        assert_eq!(c.tests.iter().fold(0.0, |acc, t| acc + t.score), s.score);
        if s.not_graded().is_none() {
            for (t, p) in c.tests.iter().zip(&ours.tests) {
                assert!((t.score * 100.0).round() as i64 <= p.max.0, "{}", t.name);
                if t.status == "fail" {
                    assert_eq!(t.score, 0.0);
                }
            }
        }
        // The CSV gradebook: each step's points out of its weight.
        let report = crate::commands::grade::GradeReport {
            schema: 1,
            fencelab_version: String::new(),
            suite: String::new(),
            min_score: 0.0,
            test_limit_secs: 10.0,
            build_limit_secs: 600.0,
            budget_secs: Some(15.0),
            shard: None,
            weights: crate::lab::course::Weights::default().by_slug(),
            correct_implementations: Vec::new(),
            freedoms: Default::default(),
            submissions: vec![s.clone()],
            exit_code: crate::exit::ExitCode::Success,
        };
        let text = csv::render(&report);
        assert!(!text.contains("-0"), "{text}");
        let row = ::csv::Reader::from_reader(text.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(cents(row[2].parse().unwrap()), score);
        let steps: Vec<i64> = (4..12).map(|i| cents(row[i].parse().unwrap())).collect();
        assert_eq!(steps.iter().sum::<i64>(), score);
        for (i, st) in steps.iter().enumerate() {
            assert!(
                *st <= ours.step(i as u32 + 1).max.0,
                "step {}: {row:?}",
                i + 1
            );
        }
        assert_eq!(ours.steps.iter().map(|st| st.max.0).sum::<i64>(), 10_000);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn every_formats_points_never_exceed_their_maxima_and_add_up(
            steps in proptest::collection::vec((1usize..=30, 0.0f64..=1.0), 1..=8),
            broken in proptest::sample::select(vec![None, Some("compile"), Some("unusable")]),
        ) {
            let sizes: Vec<usize> = steps.iter().map(|(n, _)| *n).collect();
            let passed: Vec<usize> = steps
                .iter()
                .map(|(n, f)| ((*n as f64) * f).round() as usize)
                .collect();
            let mut s = submission(&sizes, &passed);
            match broken {
                Some("compile") => {
                    s.compile_errors = Some("error[E0308]: mismatched types".into());
                    s.score = 0.0;
                    s.tests.clear();
                }
                Some(_) => {
                    s.unusable = Some("no API".into());
                    s.score = 0.0;
                    s.tests.clear();
                }
                None => {}
            }
            check_formats(&s);
        }
    }

    #[test]
    fn every_format_adds_up_on_the_suites_own_sizes() {
        for passed in [
            SUITE,
            [0; 8],
            [1; 8],
            [7, 5, 6, 24, 15, 11, 10, 8],
            [3, 1, 5, 1, 11, 4, 2, 7],
        ] {
            check_formats(&submission(&SUITE, &passed));
        }
    }

    #[test]
    fn points_out_of_another_total_add_up_too() {
        let s = submission(&[3, 3, 3, 3, 3, 3, 3, 3], &[1, 2, 1, 2, 1, 2, 1, 2]);
        check_points(&s, 20.0);
        assert_eq!(score(&s, 20.0), 10.0);
        assert_eq!(score(&s, 100.0), s.score);
    }

    #[test]
    fn a_submission_that_does_not_compile_earns_nothing() {
        let mut s = submission(&[2; 8], &[2; 8]);
        s.compile_errors = Some("error".into());
        assert_eq!(score(&s, 100.0), 0.0);
        check_points(&s, 100.0);
        assert!(of(&s, 100.0).tests.iter().all(|t| t.earned.0 == 0));
    }
}
