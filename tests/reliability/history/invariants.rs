//! The invariants of the module header, one function each, in the header's
//! order. Each returns the violations it finds (empty when the invariant
//! holds) and adds to the stats what it exercised.

use std::collections::HashMap;

use super::leases::History;
use super::log::{Answer, Entry, Kind, parse_result};
use super::{Run, Stats};

/// Structure: only the last operation of a killed worker lacks an answer; no
/// call returned an error; the table holds exactly the enqueued jobs.
///
/// Why it holds: a worker logs each answer as soon as the call returns, so
/// only a SIGKILL between the two lines leaves a call without one, and a
/// killed worker writes nothing more. A call waits for a busy database
/// instead of failing, and the next connection rolls a killed writer's hot
/// journal back, so no call fails. No call deletes a row, and `enqueue` of a
/// job that exists (the workers only enqueue jobs the coordinator enqueued
/// before they started) leaves it alone and answers `false`.
pub(super) fn structure(run: &Run, history: &History, stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    for (worker, entries) in &run.logs {
        for (i, e) in entries.iter().enumerate() {
            stats.calls += 1;
            match &e.end {
                None => {
                    stats.unknown += 1;
                    if i + 1 != entries.len() || !run.killed.contains(worker) {
                        v.push(format!("{e}: no answer, but {worker} was not killed then"));
                    }
                }
                Some((_, Answer::Error(msg))) => v.push(format!("{e}: the call failed: {msg}")),
                Some(_) => {}
            }
        }
    }
    let ids: Vec<&String> = run.final_rows.keys().collect();
    let mut expected: Vec<&String> = run.jobs.iter().collect();
    expected.sort();
    if ids != expected {
        v.push(format!(
            "final table has ids {ids:?}, expected {expected:?}"
        ));
    }
    for e in &history.all {
        if e.call.kind == Kind::Enqueue && e.accepted() == Some(true) {
            v.push(format!("{e}: enqueue of an existing job inserted a row"));
        }
    }
    v
}

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

/// One thing known about a job's row at some point of the global order.
struct Obs {
    start: u64,
    end: u64,
    fence: i64,
    done: bool,
    result: Option<String>,
    claim: bool,
    what: String,
}

/// Order: across every pair of ordered observations of a job (answers, states
/// read by workers, the coordinator's samples, the final row) the fence never
/// decreases, a claim's fence is above every earlier observed fence, and once
/// a job was seen done it stays done with the same fence and result, and no
/// later claim succeeds.
///
/// Why it holds: only a claim writes the fence, and it writes the stored one
/// plus one, so the stored fence only grows and a claim that took effect after
/// an observation sets a higher one. Nothing changes a done row: renew,
/// complete and release require `done = 0`, and a claim refuses a done job.
/// Only pairs whose order the sequence numbers prove are compared (at most
/// three problems are reported per job).
pub(super) fn order(run: &Run, history: &History, _stats: &mut Stats) -> Vec<String> {
    let mut v = Vec::new();
    let mut obs: HashMap<&str, Vec<Obs>> = HashMap::new();
    for e in &history.all {
        let Some(answer) = e.answer() else { continue };
        let end = e.end_seq();
        let mut push = |fence, done, result: Option<String>, claim| {
            obs.entry(e.call.job.as_str()).or_default().push(Obs {
                start: e.start,
                end,
                fence,
                done,
                result,
                claim,
                what: e.to_string(),
            })
        };
        match (e.call.kind, answer) {
            (_, Answer::State(Some(row))) => push(row.fence, row.done, row.result.clone(), false),
            (Kind::Claim | Kind::ClaimMany, _) => {
                for (_, fence) in e.winners() {
                    push(fence, false, None, true);
                }
            }
            (Kind::Renew | Kind::Release, Answer::Bool(true)) => {
                push(e.call.fence, false, None, false)
            }
            (Kind::Complete, Answer::Bool(true)) => {
                push(e.call.fence, true, Some(e.call.result.clone()), false)
            }
            _ => {}
        }
    }
    for sample in &run.samples {
        for row in &sample.rows {
            if let Some(id) = run
                .final_rows
                .get_key_value(&row.id)
                .map(|(k, _)| k.as_str())
            {
                obs.entry(id).or_default().push(Obs {
                    start: sample.start,
                    end: sample.end,
                    fence: row.fence,
                    done: row.done,
                    result: row.result.clone(),
                    claim: false,
                    what: format!("[sample seq {}..{}] {row:?}", sample.start, sample.end),
                });
            }
        }
    }
    for (job, row) in &run.final_rows {
        obs.entry(job.as_str()).or_default().push(Obs {
            start: u64::MAX,
            end: u64::MAX,
            fence: row.fence,
            done: row.done,
            result: row.result.clone(),
            claim: false,
            what: format!("[final] {row:?}"),
        });
    }
    for (job, list) in &mut obs {
        list.sort_by_key(|o| (o.end, o.start));
        let mut reported = 0;
        for (i, a) in list.iter().enumerate() {
            for b in list[i + 1..].iter().filter(|b| a.end < b.start) {
                let problem = if b.fence < a.fence {
                    "the fence went down"
                } else if b.claim && b.fence == a.fence {
                    "a claim did not raise the fence"
                } else if a.done && b.claim {
                    "a claim succeeded after the job was done"
                } else if a.done && (!b.done || b.fence != a.fence || b.result != a.result) {
                    "a done job changed"
                } else {
                    continue;
                };
                if reported < 3 {
                    v.push(format!(
                        "{job}: {problem}:\n    before: {}\n    after:  {}",
                        a.what, b.what
                    ));
                }
                reported += 1;
            }
        }
    }
    v
}

/// Completes: at most one complete per job was accepted, and it is exactly
/// the final row's owner, fence and result; a done row without an accepted
/// complete must match a complete whose answer is unknown; the stored result
/// names the lease that wrote it, and its time was before the lease's end.
///
/// Why it holds: complete requires `done = 0` and sets `done = 1`, so it is
/// accepted once per job, and nothing changes a done row afterwards; a done
/// row that no logged answer explains was completed by a call whose worker
/// was killed before it logged the answer. A worker's result names the owner,
/// fence and time of its call ([`result_for`](super::result_for)), and
/// complete requires that owner and fence in the row and `until > now`.
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
