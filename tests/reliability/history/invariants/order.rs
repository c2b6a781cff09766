//! The order invariant: [`order`].

use std::collections::HashMap;

use crate::history::leases::History;
use crate::history::log::{Answer, Kind};
use crate::history::{Run, Stats};

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
