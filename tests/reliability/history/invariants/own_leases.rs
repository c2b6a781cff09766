//! The each worker's own leases invariant: [`own_leases`].

use std::collections::HashMap;

use crate::history::leases::History;
use crate::history::log::Kind;
use crate::history::{Run, Stats};

/// Each worker's own leases (it sees their whole history): an accepted
/// renew/complete/release used the fence the worker holds, on a lease that
/// was not done or released, and (renew/complete) at a time before its end.
/// A refusal of a live, open lease is only allowed when a later claim took
/// the job over (the final fence is higher).
///
/// Why it holds: renew, complete and release require the row's owner and
/// fence and `done = 0`, and renew and complete also `until > now`. Owner
/// names are the worker's own, so while its lease lasts only its own calls,
/// all in its log, change the row; anyone else must claim the job, which
/// raises the fence.
pub(super) fn own_leases(run: &Run, _history: &History, stats: &mut Stats) -> Vec<String> {
    struct Held {
        fence: i64,
        until: f64,
        done: bool,
        released: bool,
    }
    let mut v = Vec::new();
    for (_, entries) in &run.logs {
        let mut held: HashMap<(&str, &str), Held> = HashMap::new();
        for e in entries {
            let key = (e.call.job.as_str(), e.call.owner());
            if e.call.kind.is_claim() {
                for (owner, fence) in e.winners() {
                    let until = e.call.now + e.call.ttl;
                    let lease = Held {
                        fence,
                        until,
                        done: false,
                        released: false,
                    };
                    held.insert((e.call.job.as_str(), owner), lease);
                }
                continue;
            }
            if !matches!(e.call.kind, Kind::Renew | Kind::Complete | Kind::Release) {
                continue;
            }
            let Some(accepted) = e.accepted() else {
                continue;
            };
            let Some(h) = held.get_mut(&key) else {
                if accepted {
                    v.push(format!(
                        "{e}: accepted for an owner that never claimed the job"
                    ));
                }
                continue;
            };
            if e.call.fence != h.fence {
                if accepted {
                    v.push(format!(
                        "{e}: accepted with fence {} while this owner's lease has fence {}",
                        e.call.fence, h.fence
                    ));
                } else {
                    stats.refused_wrong_fence += 1;
                }
                continue;
            }
            let timed = e.call.kind != Kind::Release;
            let open = !h.done && !h.released;
            let live = !timed || e.call.now < h.until;
            let taken_over = run
                .final_rows
                .get(&e.call.job)
                .is_some_and(|row| row.fence > h.fence);
            if timed && e.call.now == h.until {
                stats.calls_at_boundary += 1;
            }
            if accepted {
                if !open {
                    let why = if h.done { "done" } else { "released" };
                    v.push(format!("{e}: accepted on a lease already {why}"));
                } else if !live {
                    v.push(format!(
                        "{e}: accepted at {} but the lease ended at {} (stale)",
                        e.call.now, h.until
                    ));
                }
                match e.call.kind {
                    Kind::Renew => h.until = e.call.now + e.call.ttl,
                    Kind::Complete => h.done = true,
                    _ => h.released = true,
                }
            } else if !open {
                stats.refused_after_end += 1;
            } else if !live {
                stats.refused_after_expiry += 1;
            } else if taken_over {
                stats.refused_after_takeover += 1;
            } else {
                v.push(format!(
                    "{e}: refused, but the lease was open and live (until {}) and nobody claimed the job after it",
                    h.until
                ));
            }
        }
    }
    v
}
