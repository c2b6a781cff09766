//! The completes invariant: [`completes`].

use crate::history::leases::History;
use crate::history::log::{Entry, Kind, parse_result};
use crate::history::{Run, Stats};

/// Completes: at most one complete per job was accepted, and it is exactly
/// the final row's owner, fence and result; a done row without an accepted
/// complete must match a complete whose answer is unknown; the stored result
/// names the lease that wrote it, and its time was before the lease's end.
///
/// Why it holds: complete requires `done = 0` and sets `done = 1`, so it is
/// accepted once per job, and nothing changes a done row afterwards; a done
/// row that no logged answer explains was completed by a call whose worker
/// was killed before it logged the answer. A worker's result names the owner,
/// fence and time of its call
/// ([`result_for`](crate::history::result_for)), and complete requires that
/// owner and fence in the row and `until > now`.
pub(super) fn completes(run: &Run, history: &History, stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for (job, row) in &run.final_rows {
        stats.jobs_done += usize::from(row.done);
        let accepted: Vec<&Entry> = history
            .job_ops(job)
            .iter()
            .copied()
            .filter(|e| e.call.kind == Kind::Complete && e.accepted() == Some(true))
            .collect();
        stats.completes_accepted += accepted.len();
        if accepted.len() > 1 {
            let list: Vec<String> = accepted.iter().map(|e| e.to_string()).collect();
            v.push(format!(
                "{job}: more than one complete accepted:\n    {}",
                list.join("\n    ")
            ));
        }
        if row.done {
            let matches = |e: &Entry| {
                row.owner.as_deref() == Some(e.call.owner())
                    && row.fence == e.call.fence
                    && row.result.as_deref() == Some(e.call.result.as_str())
            };
            if let Some(c) = accepted.first() {
                if !matches(c) {
                    v.push(format!("{c}: accepted, but the final row is {row:?}"));
                }
            } else if !history
                .job_ops(job)
                .iter()
                .any(|e| e.call.kind == Kind::Complete && e.end.is_none() && matches(e))
            {
                v.push(format!(
                    "{job}: done in the final row {row:?}, but no complete explains it"
                ));
            }
            match row.result.as_deref().and_then(parse_result) {
                Some((owner, fence, now))
                    if row.owner.as_deref() == Some(owner) && row.fence == fence =>
                {
                    if now >= row.until {
                        v.push(format!(
                            "{job}: result written at {now}, but the lease ended at {}: {row:?}",
                            row.until
                        ));
                    }
                }
                _ => v.push(format!(
                    "{job}: the result was not written by the final lease: {row:?}"
                )),
            }
        } else if let Some(c) = accepted.first() {
            v.push(format!(
                "{c}: accepted, but the final row is not done: {row:?}"
            ));
        }
    }
    v
}
