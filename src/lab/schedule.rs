//! Runs of the reference that decide `claim_many`'s race differently, so that
//! a learner's test that depends on the race shows it.
//!
//! The contract lets any owner of `claim_many` win. Left to the scheduler, the
//! reference lets the first owner win most of the time. A test asserting the
//! winner would pass or fail by chance, and what a learner reads would change
//! from run to run. Instead, each run (`scheduled`) decides the race its own
//! fixed way. Such a test then passes on one run and fails on another, on every
//! judgement. The single-freedom variants whose `claim_many` is the reference's
//! run under schedule 0 too, so their race never changes a verdict either.
//!
//! Invariant: a scheduled implementation differs from the one it came from in
//! `claim_many` only, and in nothing a test can observe but the winner. The unit
//! tests below check it, and `tests/cli/learner_tests/` checks its behaviour.

use std::sync::OnceLock;

use crate::lab::mutant::{Stale, apply};
use crate::lab::wheat::{WheatSource, Wheats};

/// How many runs of the reference judge a learner's test: enough that with
/// up to three owners every owner goes first in one run.
pub(crate) const RUNS: usize = 3;

/// The wheat whose gate the runs reuse.
const GATED: &str = "variant-claim-many-winner";

/// The line of that wheat that chooses the last owner as the leader.
const LAST_LEADS: &str = "    let Some(leader) = owners.len().checked_sub(1) else {
        return Ok(Vec::new());
    };
";

/// The gated `claim_many` of `variant-claim-many-winner`, as `(find,
/// replace)`: read from the built-in wheats once per process.
fn gated() -> &'static (String, String) {
    static GATE: OnceLock<(String, String)> = OnceLock::new();
    GATE.get_or_init(|| gated_in(&Wheats::builtin()))
}

/// The change of `variant-claim-many-winner` among `wheats` (the Rust or
/// the Python edition's built-in ones), as `(find, replace)`.
pub(crate) fn gated_in(wheats: &Wheats) -> (String, String) {
    let gated = wheats
        .wheats
        .iter()
        .find(|w| w.id == GATED)
        .expect("the built-in wheats include variant-claim-many-winner");
    let WheatSource::Change { find, replace } = &gated.source else {
        unreachable!("{GATED} is a change of the reference");
    };
    (find.clone(), replace.clone())
}

/// `source` (the reference, or a change of it that keeps its `claim_many`)
/// under schedule `run`. `Err` when `source` has no `claim_many` of the
/// reference's.
///
/// Run `r` (`0..RUNS`) lets the owner at `(r + c) % owners.len()` take the
/// write lock first in its `c`-th call. The others take it only once that
/// owner holds it. Calls are counted from 0 in each process, and each trial is a process
/// of its own. The gate is `variant-claim-many-winner`'s, which lets the last
/// owner go first. Each run is a correct implementation.
pub(crate) fn scheduled(source: &str, run: usize) -> Result<String, Stale> {
    let (find, replace) = gated();
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
    apply(source, find, &replace)
}

/// `source` with a `claim_many` in which the first owner always leads: a
/// correct implementation that tells a test assuming the first owner wins
/// from one that contradicts the contract (`judging::judge`).
pub(crate) fn first_leads(source: &str) -> Result<String, Stale> {
    let (find, replace) = gated();
    let leads = "    if owners.is_empty() {
        return Ok(Vec::new());
    }
    // fencelab's probe of the reference: the first owner always leads.
    let leader = 0;
";
    let replace = apply(replace, LAST_LEADS, leads)?;
    apply(source, find, &replace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::reference::REFERENCE;

    #[test]
    fn every_run_is_the_reference_but_for_claim_manys_leader() {
        let runs: Vec<String> = (0..RUNS)
            .map(|r| scheduled(REFERENCE, r).unwrap())
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

    #[test]
    fn a_changed_claim_many_is_left_alone() {
        let wheats = Wheats::builtin();
        let winner = wheats.wheats.iter().find(|w| w.id == GATED).unwrap();
        let code = winner.code(REFERENCE).unwrap();
        assert!(scheduled(&code, 0).is_err(), "{GATED} keeps its own winner");
        let journal = wheats
            .wheats
            .iter()
            .find(|w| w.id == "variant-journal-mode")
            .unwrap();
        let code = journal.code(REFERENCE).unwrap();
        let run = scheduled(&code, 0).unwrap();
        assert!(run.contains("journal_mode = WAL") && run.contains("AtomicUsize::new(0)"));
    }
}
