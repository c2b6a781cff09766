//! The final rows invariant: [`final_rows`].

use crate::history::leases::History;
use crate::history::{Run, Stats};

/// Final rows: each row is what the lease with the final fence leads to,
/// allowing the holder's one unknown operation to have gone either way.
///
/// Why it holds: only calls naming the row's fence change it after the claim
/// that set it (renew, complete and release require it), so the row is that
/// claim's row with the holder's accepted calls applied in order. A holder
/// killed in a call leaves that call's effect unknown; when the final fence's
/// claim itself had an unknown answer, its worker made no later call, so the
/// row is as the claim left it, for one of its owners.
pub(super) fn final_rows(run: &Run, history: &History, _stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for (job, row) in &run.final_rows {
        let got = (row.owner.clone(), row.until, row.done, row.result.clone());
        let candidates: Vec<_> = if row.fence == 0 {
            vec![(None, 0.0, false, None)]
        } else if let Some(lease) = history.leases.get(&(job.as_str(), row.fence)) {
            let (fate, pending) = lease.fate(|_| true);
            let mut rows = vec![lease.row(&fate)];
            if let Some(p) = pending {
                let mut maybe = fate.clone();
                maybe.apply(&p.call);
                rows.push(lease.row(&maybe));
            }
            rows
        } else {
            history
                .unknown_claims(job)
                .iter()
                .flat_map(|u| {
                    u.call
                        .owners
                        .iter()
                        .map(|o| (Some(o.clone()), u.call.now + u.call.ttl, false, None))
                })
                .collect()
        };
        if !candidates.contains(&got) {
            v.push(format!(
                "{job}: final row {row:?} is none of {candidates:?}, what its last lease allows"
            ));
        }
    }
    v
}
