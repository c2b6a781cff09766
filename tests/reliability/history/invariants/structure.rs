//! The structure invariant: [`structure`].

use crate::history::leases::History;
use crate::history::log::{Answer, Kind};
use crate::history::{Run, Stats};

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
