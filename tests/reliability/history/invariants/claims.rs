//! The claims invariant: [`claims`].

use crate::history::leases::History;
use crate::history::log::{Entry, Kind};
use crate::history::{Run, Stats};

/// Claims: a successful claim follows a previous lease that was released or
/// had expired at the claim's time (never a done one); a refused claim, when
/// nothing overlapped it, met a done or live lease.
///
/// Why it holds: claim takes a job only when it is not done and
/// `until <= now`, that is when the lease before it was released (`until` is
/// then 0) or had ended by the claim's `now`, and it refuses otherwise.
pub(super) fn claims(_run: &Run, history: &History, stats: &mut Stats) -> Vec<String> {
    for e in history.all.iter().filter(|e| e.call.kind.is_claim()) {
        match e.answer() {
            None => {}
            Some(_) if e.winners().is_empty() => stats.claims_refused += 1,
            Some(_) => stats.claims_won += 1,
        }
    }
    let mut v = won_claims(history, stats);
    v.extend(refused_claims(history, stats));
    v
}

/// Claims that won: the previous lease (the fence below) was released or had
/// expired at the claim's time, and was not done; its holder's one unknown
/// renew may have extended it. A previous lease whose claim has an unknown
/// answer was won by one of the unknown claims that started before this claim
/// ended, and lasted (its killed holder made no later call) at least until
/// the earliest of their ends.
fn won_claims(history: &History, stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for ((job, fence), lease) in &history.leases {
        if *fence <= 1 {
            continue;
        }
        let now = lease.claim.call.now;
        let bound = if let Some(prev) = history.leases.get(&(*job, fence - 1)) {
            let (fate, pending) = prev.fate(|_| true);
            if fate.done {
                v.push(format!(
                    "{}: won on a job that {} had completed",
                    lease.claim, prev.claim.worker
                ));
                continue;
            }
            if fate.released {
                continue;
            }
            match pending {
                None => fate.until,
                Some(p) if p.call.kind == Kind::Renew => fate.until.min(p.call.now + p.call.ttl),
                Some(_) => continue,
            }
        } else {
            let before: Vec<&Entry> = history
                .unknown_claims(job)
                .into_iter()
                .filter(|u| u.start < lease.claim.end_seq())
                .collect();
            match before
                .iter()
                .map(|u| u.call.now + u.call.ttl)
                .reduce(f64::min)
            {
                Some(bound) => bound,
                None => continue,
            }
        };
        if now < bound {
            v.push(format!(
                "{}: won fence {fence} at {now}, but lease {} was live until {bound}",
                lease.claim,
                fence - 1
            ));
        } else {
            stats.takeovers_after_expiry += 1;
            stats.claims_at_boundary += usize::from(now == bound);
        }
    }
    v
}

/// Claims that were refused: when no call that may have changed the row
/// overlapped them, the job was done or held by a live lease, as the calls
/// ordered before the claim left it.
fn refused_claims(history: &History, stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for c in history.all.iter().filter(|e| e.call.kind.is_claim()) {
        if c.end.is_none() || !c.winners().is_empty() {
            continue;
        }
        let job = c.call.job.as_str();
        let overlapped = history
            .job_ops(job)
            .iter()
            .any(|m| !std::ptr::eq(*m, *c) && m.may_have_mutated() && m.overlaps(c));
        if overlapped {
            continue;
        }
        let before = |e: &Entry| e.end_seq() < c.start;
        let current = history
            .leases
            .iter()
            .filter(|((j, _), lease)| *j == job && before(lease.claim))
            .max_by_key(|((_, fence), _)| *fence);
        let free = match current {
            None => Some("never claimed".to_string()),
            Some((_, lease)) => {
                let (fate, _) = lease.fate(before);
                if fate.done {
                    None
                } else if fate.released {
                    Some(format!("released by {}", lease.claim.worker))
                } else if fate.until <= c.call.now {
                    Some(format!("lease {} ended at {}", lease.fence, fate.until))
                } else {
                    None
                }
            }
        };
        match free {
            Some(why) => v.push(format!("{c}: refused, but the job was free ({why})")),
            None => stats.refusals_justified += 1,
        }
    }
    v
}
