//! The score: each step's share caught, counted by the course's weights.

use super::*;
use crate::judging::report::StepThoroughness;

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
