//! The fences invariant: [`fences`].

use crate::history::leases::History;
use crate::history::{Run, Stats};

/// Fences: no fence of a job was handed out twice (two holders at once);
/// every handed-out fence is between 1 and the final fence; fences missing
/// from the logs are no more than the unknown claims that could have taken
/// them.
///
/// Why it holds: a claim reads the fence and writes it plus one in a single
/// `BEGIN IMMEDIATE` transaction, and no other call writes it, so claims of a
/// job are serialized and hand out 1, 2, … up to the final fence, each once.
/// A fence between 1 and the final one that no logged answer shows was won by
/// a claim whose answer was lost, one fence at most per owner of that claim.
pub(super) fn fences(run: &Run, history: &History, _stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for (fence, first, second) in &history.reused_fences {
        v.push(format!(
            "fence {fence} of {} handed out twice: {first} and {second}",
            second.call.job
        ));
    }
    for (job, row) in &run.final_rows {
        let mut known = 0;
        for ((_, fence), lease) in history.leases.iter().filter(|((j, _), _)| j == job) {
            known += 1;
            if *fence < 1 || *fence > row.fence {
                v.push(format!(
                    "{}: fence {fence} outside 1..={} (the final fence)",
                    lease.claim, row.fence
                ));
            }
        }
        let unknown: usize = history
            .unknown_claims(job)
            .iter()
            .map(|u| u.call.owners.len())
            .sum();
        let missing = usize::try_from(row.fence)
            .unwrap_or(0)
            .saturating_sub(known);
        if missing > unknown {
            v.push(format!(
                "{job}: final fence {} but only {known} logged claims won and {unknown} claims have unknown answers",
                row.fence
            ));
        }
    }
    v
}
