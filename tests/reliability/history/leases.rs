//! What the invariants derive from the logs, once per run: every logged
//! operation, by worker and by job, and the leases handed out, each with its
//! holder's later calls, replayed into what they made of it.

use std::collections::HashMap;

use super::Run;
use super::log::{Call, Entry, Kind};

/// The logs of a run, indexed for the invariants.
pub(super) struct History<'a> {
    /// Every logged operation: worker by worker, each worker's in log order.
    pub(super) all: Vec<&'a Entry>,
    /// The same operations, by job.
    by_job: HashMap<&'a str, Vec<&'a Entry>>,
    /// The leases handed out, by job and fence: one per fence won by a claim
    /// whose answer was logged (the later claim, when two won one fence).
    pub(super) leases: HashMap<(&'a str, i64), Lease<'a>>,
    /// Fences won by two logged claims, as (fence, earlier claim, later
    /// claim), in the order of [`History::all`].
    pub(super) reused_fences: Vec<(i64, &'a Entry, &'a Entry)>,
}

impl<'a> History<'a> {
    pub(super) fn new(run: &'a Run) -> History<'a> {
        let all: Vec<&Entry> = run.logs.iter().flat_map(|(_, es)| es).collect();
        let mut by_job: HashMap<&str, Vec<&Entry>> = HashMap::new();
        for e in &all {
            by_job.entry(e.call.job.as_str()).or_default().push(e);
        }

        // Leases handed out, from every claim whose answer was logged.
        let mut leases: HashMap<(&str, i64), Lease> = HashMap::new();
        let mut reused_fences = Vec::new();
        for e in all.iter().copied().filter(|e| e.call.kind.is_claim()) {
            // Two winners in one claim_many are possible: while the call
            // waited for the lock with its (by then old) `now`, another worker
            // took the job over and released it. Two winners of *one* lease
            // show up in the claims invariant as a claim that won while the
            // previous lease was live.
            for (owner, fence) in e.winners() {
                let lease = Lease {
                    claim: e,
                    owner,
                    fence,
                    ops: Vec::new(),
                };
                if let Some(other) = leases.insert((e.call.job.as_str(), fence), lease) {
                    reused_fences.push((fence, other.claim, e));
                }
            }
        }
        for e in &all {
            if !matches!(e.call.kind, Kind::Renew | Kind::Complete | Kind::Release) {
                continue;
            }
            if let Some(lease) = leases.get_mut(&(e.call.job.as_str(), e.call.fence))
                && lease.owner == e.call.owner()
                && lease.claim.worker == e.worker
                && lease.claim.index < e.index
            {
                lease.ops.push(e);
            }
        }
        for lease in leases.values_mut() {
            lease.ops.sort_by_key(|op| op.index);
        }
        History {
            all,
            by_job,
            leases,
            reused_fences,
        }
    }

    /// Every logged operation on `job`.
    pub(super) fn job_ops(&self, job: &str) -> &[&'a Entry] {
        self.by_job.get(job).map_or(&[], Vec::as_slice)
    }

    /// The claims of `job` whose answer is unknown (their worker was killed).
    pub(super) fn unknown_claims(&self, job: &str) -> Vec<&'a Entry> {
        self.job_ops(job)
            .iter()
            .copied()
            .filter(|e| e.call.kind.is_claim() && e.end.is_none())
            .collect()
    }
}

/// A lease handed out by a claim whose answer was logged.
pub(super) struct Lease<'a> {
    pub(super) claim: &'a Entry,
    pub(super) owner: &'a str,
    pub(super) fence: i64,
    /// The holder's renew/complete/release calls for this lease, in order.
    pub(super) ops: Vec<&'a Entry>,
}

/// What a lease's own accepted calls made of it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Fate {
    pub(super) until: f64,
    pub(super) done: bool,
    pub(super) result: Option<String>,
    pub(super) released: bool,
}

impl Fate {
    pub(super) fn apply(&mut self, call: &Call) {
        match call.kind {
            Kind::Renew => self.until = call.now + call.ttl,
            Kind::Complete => {
                self.done = true;
                self.result = Some(call.result.clone());
            }
            Kind::Release => {
                self.released = true;
                self.until = 0.0;
            }
            _ => {}
        }
    }
}

impl<'a> Lease<'a> {
    /// Replays the holder's accepted calls among those `include` selects;
    /// also returns the holder's call with an unknown answer, if selected.
    pub(super) fn fate(&self, include: impl Fn(&Entry) -> bool) -> (Fate, Option<&'a Entry>) {
        let mut fate = Fate {
            until: self.claim.call.now + self.claim.call.ttl,
            done: false,
            result: None,
            released: false,
        };
        let mut pending = None;
        for op in self.ops.iter().filter(|op| include(op)) {
            match op.accepted() {
                Some(true) => fate.apply(&op.call),
                Some(false) => {}
                None => pending = Some(*op),
            }
        }
        (fate, pending)
    }

    /// The row this lease leaves behind, given its fate.
    pub(super) fn row(&self, fate: &Fate) -> (Option<String>, f64, bool, Option<String>) {
        let owner = (!fate.released).then(|| self.owner.to_string());
        (owner, fate.until, fate.done, fate.result.clone())
    }
}
