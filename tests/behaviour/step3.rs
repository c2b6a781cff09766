//! Step 3, state: the stored row read back through a connection of its own,
//! `Some(Job)` when the job exists and `None` when it does not.

use crate::lease::{self, Job};
use crate::support::{Db, Row, observe};

fn job(id: &str, row: Row) -> Job {
    Job {
        id: id.to_string(),
        owner: row.owner,
        until: row.until,
        fence: row.fence,
        result: row.result,
        done: row.done != 0,
    }
}

#[test]
fn missing_job_is_none() {
    let db = Db::new();
    let answer = lease::state(&db.path, "ghost").map_err(|e| e.to_string());
    observe("state of a job that was never enqueued", answer, Ok(None));
}

#[test]
fn missing_job_among_others_is_none() {
    let db = Db::new();
    db.put("job-1", Row::fresh());
    let answer = lease::state(&db.path, "job-2").map_err(|e| e.to_string());
    observe("state of an id that is not in the table", answer, Ok(None));
}

#[test]
fn fresh_job_reads_the_defaults() {
    let db = Db::new();
    db.put("job-1", Row::fresh());
    let answer = lease::state(&db.path, "job-1").map_err(|e| e.to_string());
    observe(
        "state of a job just enqueued",
        answer,
        Ok(Some(job("job-1", Row::fresh()))),
    );
}

#[test]
fn held_job_reads_every_field() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 42, 1234.375));
    let answer = lease::state(&db.path, "job-1").map_err(|e| e.to_string());
    observe(
        "state of a held job",
        answer,
        Ok(Some(job("job-1", Row::held("worker-a", 42, 1234.375)))),
    );
}

#[test]
fn done_job_reads_result_and_done() {
    let db = Db::new();
    db.put("job-1", Row::done("worker-b", 7, 0.1 + 0.2, "結果: ok"));
    let answer = lease::state(&db.path, "job-1").map_err(|e| e.to_string());
    observe(
        "state of a done job",
        answer,
        Ok(Some(job(
            "job-1",
            Row::done("worker-b", 7, 0.1 + 0.2, "結果: ok"),
        ))),
    );
}

#[test]
fn reads_the_row_of_the_asked_id() {
    let db = Db::new();
    db.put("job-a", Row::held("worker-a", 1, 10.0));
    db.put("job-b", Row::held("worker-b", 2, 20.0));
    let answer = lease::state(&db.path, "job-b").map_err(|e| e.to_string());
    observe(
        "state of the second of two jobs",
        answer,
        Ok(Some(job("job-b", Row::held("worker-b", 2, 20.0)))),
    );
}

#[test]
fn sees_changes_made_by_another_connection() {
    let db = Db::new();
    db.put("job-1", Row::fresh());
    let first = lease::state(&db.path, "job-1").map_err(|e| e.to_string());
    observe(
        "state before another connection writes",
        first,
        Ok(Some(job("job-1", Row::fresh()))),
    );
    db.put("job-1", Row::held("worker-z", 9, 77.5));
    let second = lease::state(&db.path, "job-1").map_err(|e| e.to_string());
    observe(
        "state after another connection stored a lease",
        second,
        Ok(Some(job("job-1", Row::held("worker-z", 9, 77.5)))),
    );
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(3);
}
