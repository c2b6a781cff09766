//! Runs of the reference that decide `claim_many`'s race differently, so that
//! a learner's test whose verdict depends on the race is seen to depend on it.
//!
//! The contract lets any owner of `claim_many` win. Left to the scheduler, the
//! reference lets the first owner win most of the time, so a test asserting
//! which owner wins passes on some runs and fails on others, and which of the
//! two a judgement sees is chance: the explanation a learner reads would change
//! from run to run. Instead, run `r` of the reference (`0..RUNS`) is the
//! reference whose `claim_many` lets the owner at `(r + c) % owners.len()` take
//! the write lock first in its `c`-th call (counted from 0 in each process, and
//! each trial is a process of its own), the others only once that owner holds
//! it; the gate is the one of the wheat `variant-claim-many-winner`, which lets
//! the last owner go first. Each run is a correct implementation, and the race
//! each one decides is decided the same way every time: a test that asserts
//! which owner wins passes on one run and fails on another, on every judgement.
//!
//! Invariant: every run differs from the reference in `claim_many` only, and
//! is the reference in everything a test can observe but the winner (checked
//! by the lab's unit tests below and, for behaviour, by `tests/learner_tests.rs`).

use crate::lab::mutant::{Stale, apply};
use crate::lab::wheat::{WheatSource, Wheats};

/// How many runs of the reference judge a learner's test: enough that with
/// up to three owners every owner goes first in one run.
pub const RUNS: usize = 3;

/// The wheat whose gate the runs reuse.
const GATED: &str = "variant-claim-many-winner";

/// The line of that wheat that chooses the last owner as the leader.
const LAST_LEADS: &str = "    let Some(leader) = owners.len().checked_sub(1) else {
        return Ok(Vec::new());
    };
";

/// The reference's run `run` (see the module's header), as source.
pub fn reference_run(reference: &str, run: usize) -> Result<String, Stale> {
    let wheats = Wheats::builtin();
    let gated = wheats
        .wheats
        .iter()
        .find(|w| w.id == GATED)
        .expect("the built-in wheats include variant-claim-many-winner");
    let WheatSource::Change { find, replace } = &gated.source else {
        unreachable!("{GATED} is a change of the reference");
    };
    let leads = format!(
        "    if owners.is_empty() {{
        return Ok(Vec::new());
    }}
    // fencelab's run {run} of the reference: each call lets the next owner lead.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new({run});
    let leader = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % owners.len();
"
    );
    let replace = apply(replace, LAST_LEADS, &leads)?;
    apply(reference, find, &replace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::reference::REFERENCE;

    #[test]
    fn every_run_is_the_reference_but_for_claim_manys_leader() {
        let runs: Vec<String> = (0..RUNS)
            .map(|r| reference_run(REFERENCE, r).unwrap())
            .collect();
        for (r, run) in runs.iter().enumerate() {
            assert_ne!(run, REFERENCE, "run {r} changes claim_many");
            assert!(run.contains(&format!("AtomicUsize::new({r})")), "run {r}");
            assert!(
                !run.contains("checked_sub(1)"),
                "run {r} rotates the leader"
            );
            // Everything before claim_many is the reference's, byte for byte.
            let head = REFERENCE.split("pub fn claim_many").next().unwrap();
            assert!(run.starts_with(head), "run {r}");
        }
        assert_ne!(runs[0], runs[1], "the runs are told apart");
    }
}
