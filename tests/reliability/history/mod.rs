//! The crash test's operation logs, and the invariants checked by comparing
//! them with the final database.
//!
//! Why logs: SQLite's own answer (`PRAGMA integrity_check`) only says that the
//! file is well formed. Whether the lease contract held under concurrency and
//! SIGKILL can only be judged from what every worker was *told*, because a
//! worker acts on its answers: a complete it was told succeeded must be in the
//! final row, a claim it was told succeeded must not have overlapped a live
//! lease, and so on.
//!
//! Format. A worker appends two lines per operation to a log of its own: a
//! start line (`S seq kind job owners fence now ttl result`) written before the
//! call, and an end line (`E seq answer`) written after the call returned and
//! before the worker acts on the answer. Each line is a single `write` on an
//! unbuffered append-mode file, so a SIGKILL loses at most the line being
//! written; a trailing partial line is ignored.
//!
//! Order. `seq` comes from a global counter shared by all processes. The call
//! takes effect (commits) after its start number was drawn and before its end
//! number was, so when `a.end < b.start`, `a` took effect before `b`.
//! Overlapping operations are left unordered, and every check below only
//! relies on this partial order.
//!
//! Time skew. A call's `now` is read before the call waits for the write
//! lock, so it can be older than the `now` of calls that committed before it.
//! No check assumes that commit order follows `now`: e.g. both owners of one
//! `claim_many` can win, with fences that are not consecutive, when another
//! worker took the job over and released it while the call waited.
//!
//! Unknown answers. A worker killed after its start line but before its end
//! line has an operation whose effect is unknown: it may have committed. It is
//! never treated as refused; checks either allow both outcomes or skip.
//!
//! What is checked (see [`check`]; each item is one function, in
//! `invariants/`, which also says why it holds):
//! - structure: only the last operation of a killed worker lacks an answer; no
//!   call returned an error; the table holds exactly the enqueued jobs.
//! - fences: no fence of a job was handed out twice (two holders at once);
//!   every handed-out fence is between 1 and the final fence; fences missing
//!   from the logs are no more than the unknown claims that could have taken
//!   them.
//! - order: across every pair of ordered observations of a job (answers,
//!   states read by workers, the coordinator's samples, the final row) the
//!   fence never decreases, a claim's fence is above every earlier observed
//!   fence, and once a job was seen done it stays done with the same fence and
//!   result, and no later claim succeeds.
//! - completes: at most one complete per job was accepted, and it is exactly
//!   the final row's owner, fence and result; a done row without an accepted
//!   complete must match a complete whose answer is unknown; the stored result
//!   names the lease that wrote it, and its time was before the lease's end.
//! - each worker's own leases (it sees their whole history): an accepted
//!   renew/complete/release used the fence the worker holds, on a lease that
//!   was not done or released, and (renew/complete) at a time before its end.
//!   A refusal of a live, open lease is only allowed when a later claim took
//!   the job over (the final fence is higher).
//! - claims: a successful claim follows a previous lease that was released or
//!   had expired at the claim's time (never a done one); a refused claim,
//!   when nothing overlapped it, met a done or live lease.
//! - final rows: each row is what the lease with the final fence leads to,
//!   allowing the holder's one unknown operation to have gone either way.

mod invariants;
mod leases;
mod log;
mod tests;

use std::collections::{BTreeMap, HashSet};

use fencelab::lease::Job;

pub use log::{Answer, Call, Entry, end_line, parse_log, result_for, start_line};

use leases::History;

/// A snapshot of the whole table taken by the coordinator between two numbers
/// of the global sequence.
pub struct Sample {
    pub start: u64,
    pub end: u64,
    pub rows: Vec<Job>,
}

/// Everything the crash test hands to [`check`].
pub struct Run {
    /// Each worker's parsed log.
    pub logs: Vec<(String, Vec<Entry>)>,
    /// Workers that died by SIGKILL (their last call may be unknown).
    pub killed: HashSet<String>,
    pub samples: Vec<Sample>,
    /// The table after every worker was gone, by id.
    pub final_rows: BTreeMap<String, Job>,
    /// The ids that were enqueued before the workers started.
    pub jobs: Vec<String>,
}

/// Counts of what the run exercised, so that the test can tell a run that
/// checked something from one that checked nothing.
#[derive(Debug, Default)]
pub struct Stats {
    pub calls: usize,
    pub unknown: usize,
    pub claims_won: usize,
    pub claims_refused: usize,
    pub refusals_justified: usize,
    pub takeovers_after_expiry: usize,
    pub claims_at_boundary: usize,
    pub completes_accepted: usize,
    pub refused_after_expiry: usize,
    pub refused_after_takeover: usize,
    pub refused_wrong_fence: usize,
    pub refused_after_end: usize,
    pub calls_at_boundary: usize,
    pub jobs_done: usize,
}

/// Compares the logs with the final database; returns the violations found
/// (empty when every invariant holds), invariant by invariant in the order of
/// the module header, and what the run exercised.
pub fn check(run: &Run) -> (Vec<String>, Stats) {
    let history = History::new(run);
    let mut stats = Stats::default();
    let violations = invariants::ALL
        .iter()
        .flat_map(|invariant| invariant(run, &history, &mut stats))
        .collect();
    (violations, stats)
}
